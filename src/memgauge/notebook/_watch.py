"""``%memgauge watch on``: after every cell, one line with its peak, increment, time and GPU peak.

The cell runs inside ``memgauge.runner.profile`` entered at IPython's ``pre_run_cell`` event and
left at ``post_run_cell`` (which IPython fires however the cell ended: an error and an interrupt
included), without the sampling thread: ``VmHWM`` reset at the cell's start gives its exact peak,
and a block costs about 0.3 ms. ``memgauge.phase`` and ``%%mgprofile`` inside a watched cell still
measure exactly: the watch is their enclosing tracker and hears of every reset they make.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memgauge._units import format_bytes, format_seconds
from memgauge.notebook._gpu import GpuMonitor, GpuPeak
from memgauge.notebook._measure import EXACT
from memgauge.runner import profile

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell


@dataclass(frozen=True)
class CellMemory:
    """One watched cell's figures, in bytes and seconds."""

    execution_count: int | None
    peak_bytes: int
    increment_bytes: int
    # resident size at the cell's end less at its start: what the cell kept
    retained_bytes: int
    end_bytes: int
    seconds: float
    method: str
    gpu: GpuPeak | None = None

    def line(self) -> str:
        cell = f"[{self.execution_count}]" if self.execution_count is not None else "cell"
        parts = [
            f"peak {format_bytes(self.peak_bytes)} ({format_bytes(self.increment_bytes, signed=True)})",
            f"now {format_bytes(self.end_bytes)} ({format_bytes(self.retained_bytes, signed=True)})",
            format_seconds(self.seconds),
        ]
        if self.gpu is not None:
            parts.append(self.gpu.describe())
        how = "" if self.method == EXACT else f" ({self.method})"
        return f"memgauge {cell}: {' · '.join(parts)}{how}"


class Watch:
    """Registered on a shell's events while watching; ``history`` keeps every watched cell."""

    def __init__(self, shell: InteractiveShell, gpu: GpuMonitor) -> None:
        self._shell = shell
        self.gpu = gpu
        self._block: profile | None = None
        self.on = False
        self.history: list[CellMemory] = []

    def start(self) -> None:
        if not self.on:
            self._shell.events.register("pre_run_cell", self._pre)
            self._shell.events.register("post_run_cell", self._post)
            self.on = True

    def stop(self) -> None:
        if self.on:
            self._shell.events.unregister("pre_run_cell", self._pre)
            self._shell.events.unregister("post_run_cell", self._post)
            self.on = False
        self._close()

    def _pre(self, info: Any = None) -> None:
        self._close()  # a cell whose post_run_cell never came (a hook that failed before it)
        self.gpu.start()
        block = profile(sample=False)
        block.__enter__()
        self._block = block

    def _close(self) -> profile | None:
        block, self._block = self._block, None
        if block is not None:
            block.__exit__(None, None, None)
        return block

    def _post(self, result: Any = None) -> None:
        block = self._close()
        if block is None or block.profile is None:
            return
        p = block.profile
        tree = p.timeline.tree_resident_bytes
        end = tree[-1] if tree else block.start_resident_bytes
        cell = CellMemory(
            execution_count=getattr(result, "execution_count", None),
            peak_bytes=p.peak.resident_bytes,
            increment_bytes=p.peak.resident_bytes - block.start_resident_bytes,
            retained_bytes=end - block.start_resident_bytes,
            end_bytes=end,
            seconds=p.wall_seconds,
            method=p.peak.method,
            gpu=self.gpu.stop(),
        )
        self.history.append(cell)
        # the cell's own output stream: ipykernel still sends it to the cell that just ran
        print(cell.line(), file=sys.stdout, flush=True)

    def table(self) -> str:
        if not self.history:
            return "memgauge: no watched cell yet (%memgauge watch on)"
        head = f"{'cell':>6}  {'peak':>10}  {'increment':>10}  {'retained':>10}  {'time':>9}  GPU peak"
        rows = [head, "-" * len(head)]
        for c in self.history:
            gpu = format_bytes(c.gpu.peak_bytes) if c.gpu is not None else ""
            rows.append(
                f"{c.execution_count if c.execution_count is not None else '-':>6}  "
                f"{format_bytes(c.peak_bytes):>10}  {format_bytes(c.increment_bytes, signed=True):>10}  "
                f"{format_bytes(c.retained_bytes, signed=True):>10}  {format_seconds(c.seconds):>9}  {gpu}"
            )
        return "\n".join(rows)
