"""``%mprun``: the memory of each line of chosen functions, from exact high-water marks.

memory_profiler's ``%mprun`` reads the resident size at each line event, so a line that allocates
and frees a temporary reads +0.0 and its spike is never seen. Here every line event (in the chosen
functions' frames only) reads the process's ``VmHWM`` and resets it, as ``memgauge.phase`` does at
a phase start. The high-water mark read at the next event is then the exact peak of the line just
run, callees included; it is folded into every line still open (a line that called another traced
function peaks at least where its callee did). Per line:

* ``peak``: the highest resident size while the line ran, over all its runs;
* ``temporary``: the most the line rose above the resident size it started at (its peak less that
  size): memory it needed while running, kept or not;
* ``increment``: the resident size after the line less before it, summed over its runs
  (memory_profiler's ``Increment``): what the line kept.

Costs two small file reads and a write per traced line (tens of microseconds): a tight loop runs
many times slower, as under memory_profiler. Uses ``sys.settrace`` on the calling thread only.
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass, field
from types import CodeType, FrameType, TracebackType
from typing import TYPE_CHECKING, Any

from memgauge.capture import ProcSelfSource, active_tracker
from memgauge.notebook._measure import mib

if TYPE_CHECKING:
    from memgauge.capture import MemorySource


@dataclass
class LineRow:
    line: int
    source: str
    hits: int = 0
    peak_bytes: int = 0
    temporary_bytes: int = 0
    increment_bytes: int = 0


@dataclass
class FunctionLines:
    """One traced function: every line of its source, with figures where the line ran."""

    name: str
    filename: str
    rows: list[LineRow] = field(default_factory=list)

    def row(self, line: int) -> LineRow | None:
        return next((r for r in self.rows if r.line == line), None)

    def table(self) -> str:
        head = (
            f"{'Line #':>6}  {'Hits':>6}  {'Peak':>11}  {'Temporary':>11}  {'Increment':>11}   Line Contents"
        )
        out = [f"Filename: {self.filename}  (function {self.name})", "", head, "=" * len(head)]
        for r in self.rows:
            if r.hits:
                figures = f"{r.hits:>6}  {mib(r.peak_bytes):>11}  {mib(r.temporary_bytes):>11}  "
                figures += f"{mib(r.increment_bytes):>11}"
            else:
                figures = " " * 6 + "  " + " " * 11 + "  " + " " * 11 + "  " + " " * 11
            out.append(f"{r.line:>6}  {figures}   {r.source}")
        return "\n".join(out)


@dataclass
class LineProfile:
    """What ``%mprun -o`` returns: the traced functions' line tables."""

    functions: list[FunctionLines]
    method: str = "VmHWM read and reset at every line event of the traced functions"

    def __str__(self) -> str:
        note = f"(peak: exact, {self.method}; sizes in MiB as memory_profiler writes them)"
        return "\n\n".join([*(f.table() for f in self.functions), note])

    def __repr__(self) -> str:
        return f"<LineProfile of {', '.join(f.name for f in self.functions)}>"

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(repr(self))


class _Open:
    __slots__ = ("code", "frame", "line", "peak", "start")

    def __init__(self, frame: FrameType, line: int, start: int) -> None:
        self.frame, self.code, self.line, self.start, self.peak = frame, frame.f_code, line, start, start


class LineMemory:
    """``with LineMemory(functions):`` traces the lines those functions run in this thread."""

    def __init__(self, functions: list[Any], source: MemorySource | None = None) -> None:
        self._source = source or ProcSelfSource()
        self._functions = [_plain(f) for f in functions]
        self._codes: set[CodeType] = {f.__code__ for f in self._functions}
        self._open: list[_Open] = []
        # (code, line) -> [hits, peak, temporary, increment]
        self._stats: dict[tuple[CodeType, int], list[int]] = {}
        self._previous: Any = None

    def __enter__(self) -> LineMemory:
        self._previous = sys.gettrace()
        sys.settrace(self._global)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        sys.settrace(self._previous)
        self._open.clear()  # frames of an interrupted run: not kept alive

    def _global(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "call" and frame.f_code in self._codes:
            self._event(frame, event)
            return self._local
        return None

    def _local(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event in ("line", "return"):
            self._event(frame, event)
        return self._local

    def _event(self, frame: FrameType, event: str) -> None:
        source = self._source
        high_water = source.high_water()
        resident = source.resident()
        for o in self._open:
            o.peak = max(o.peak, high_water)
        top = self._open[-1] if self._open else None
        if top is not None and top.frame is frame and event in ("line", "return"):
            self._close(self._open.pop(), resident)
        if event == "line":
            self._open.append(_Open(frame, frame.f_lineno, resident))
        # a tracker that measures around us (memgauge.profile, phases) keeps what the reset erases
        tracker = active_tracker()
        if tracker is not None:
            tracker.note_reset(high_water)
        source.reset_high_water()

    def _close(self, o: _Open, resident: int) -> None:
        stats = self._stats.setdefault((o.code, o.line), [0, 0, 0, 0])
        stats[0] += 1
        stats[1] = max(stats[1], o.peak)
        stats[2] = max(stats[2], o.peak - o.start)
        stats[3] += resident - o.start

    def result(self) -> LineProfile:
        out = []
        for f in self._functions:
            try:
                lines, first = inspect.getsourcelines(f)
            except (OSError, TypeError):
                lines, first = [], f.__code__.co_firstlineno
            code = f.__code__
            table = FunctionLines(f.__qualname__, code.co_filename)
            seen = {line for (c, line) in self._stats if c is code}
            numbers = range(first, first + len(lines)) if lines else sorted(seen)
            for n in numbers:
                text = lines[n - first].rstrip("\n") if lines else ""
                row = LineRow(n, text)
                stats = self._stats.get((code, n))
                if stats is not None:
                    row.hits, row.peak_bytes, row.temporary_bytes, row.increment_bytes = stats
                table.rows.append(row)
            out.append(table)
        return LineProfile(out)


def _plain(f: Any) -> Any:
    """The function behind a method, a decorated function or a staticmethod."""
    f = getattr(f, "__func__", f)
    f = inspect.unwrap(f)
    if not hasattr(f, "__code__"):
        raise TypeError(f"{f!r} is not a Python function: %mprun traces Python functions' lines")
    return f
