"""The throughput loop of a ``memgauge.profile()`` block: the steps it ran, recorded as a measured
program's are (``_capture``), so the runner assembles the block's ``training`` part alike.

A measured program's loop exists when a runner set its events directory; a block measured in a
plain process has none, so ``start_block_loop`` installs one for the block, writing its record to
the block's own directory (``training.<pid>.json``, the wire format), connected to the torch
tracker when one runs (optimizer steps end steps, DataLoader waits, the FLOPs of one step), and
``BlockLoop.stop`` takes it down again: after the block, ``memgauge.step()`` is a no-op as before.
Inside a measured run (the process has a loop of its own) the block writes the steps taken since
it began, and the run's loop goes on.
"""

from __future__ import annotations

import contextlib
import os
import sys

from memgauge.capture import TRAINING, record_writer
from memgauge.sections.training import _capture as _training

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class BlockLoop:
    """The loop of one block; ``stop`` writes its record and restores what was there before."""

    def __init__(self, directory: str) -> None:
        self._write = record_writer(directory, TRAINING)
        pid = os.getpid()
        running = _training._loop
        self._own = running is None or running.pid != pid
        self._saved = (running, _training._checked_pid)
        self._tracker: Any = None
        self._unwrap = False
        if self._own:
            self.loop = _training.Loop(write=self._write)
            _training._loop, _training._checked_pid = self.loop, pid
            self._connect_torch()
        else:
            assert running is not None
            self.loop = running
        self._first = len(self.loop.rows)
        self._dropped = self.loop.dropped

    def _connect_torch(self) -> None:
        torch = sys.modules.get("torch")
        tracking = sys.modules.get("memgauge.sections.torch._capture")
        tracker = tracking.active_torch_tracker() if tracking is not None else None
        if tracker is None or torch is None or not hasattr(torch, "nn") or tracker.on_step is not None:
            return
        from memgauge.sections.training import _capture_torch as _training_torch

        self._unwrap = not _training_torch._wrapped
        _training_torch.attach(tracker)
        self._tracker = tracker

    def stop(self) -> None:
        loop = self.loop
        if not self._own:
            record = loop.record()
            record["steps"] = record["steps"][self._first :]
            if "copies" in record:  # one row per step, as the steps (its totals are the run's)
                record["copies"] = {**record["copies"], "steps": record["copies"]["steps"][self._first :]}
            record["steps_dropped"] = loop.dropped - self._dropped
            if record["steps"] or record["steps_dropped"]:
                with contextlib.suppress(OSError, TypeError, ValueError):
                    self._write(record)
            return
        try:
            if loop.torch is not None:
                # a block ended inside the counted step leaves the counter: closed here
                with contextlib.suppress(Exception):
                    loop.torch.at_exit()
            if loop.rows or loop.counters or loop.fetches:
                loop.flush()
        finally:
            _training._loop, _training._checked_pid = self._saved
            if self._tracker is not None:
                self._tracker.on_step = None
                if self._unwrap:
                    from memgauge.sections.training import _capture_torch as _training_torch

                    _training_torch.unwrap()


def start_block_loop(directory: str) -> BlockLoop:
    """The block's loop, writing to ``directory``; call ``stop`` when the block ends."""
    return BlockLoop(directory)
