"""Training throughput inside the measured process: steps, the wait for data, samples, counters.

Standard library only. A ``Loop`` per process keeps one row per step (``_wire.TRAINING_STEP_ROW``):
when it ended, its wall time (from the previous step's end, or from the first thing the loop was
seen doing), how much of it was spent waiting for the next batch, and how many samples it took.
Steps end at ``memgauge.step()`` or, under torch, at each optimizer step (the torch tracker calls
``Loop.end_step`` through ``on_step``). Batches are seen where the program fetches them: torch's
DataLoader iterators (``_capture_torch`` wraps ``__next__`` once torch is imported) or any
iterator the program wraps in ``memgauge.timed_iter``. ``memgauge.step("env")`` (a kind) only
counts: for loops without a model (RL environment steps, data generation).

The loop writes ``training.<pid>.json`` (``_wire``), rewritten whole at most every second at step
ends and at exit: one ``os.replace`` per second, however short the steps.
"""

from __future__ import annotations

import os
import sys
import time

from memgauge._env import ENV_EVENTS_DIR
from memgauge.capture import STEADY_AFTER, TRAINING, WritePace, paced_write, record_writer

# not `from typing import TYPE_CHECKING`: importing typing costs the measured process ~8 ms
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any, TypeVar

    T = TypeVar("T")

MAX_STEPS = 20000


def batch_samples(batch: object) -> int | None:
    """The leading dimension of a batch: of the batch itself when it has a shape, else of the first
    element (a tuple or list) or value (a dict) that has one. None where nothing has a shape."""
    found = _leading(batch)
    if found is not None:
        return found
    items: Iterable[object] = ()
    if isinstance(batch, (tuple, list)):
        items = batch
    elif isinstance(batch, dict):
        items = batch.values()
    for item in items:
        found = _leading(item)
        if found is not None:
            return found
    return None


def _leading(value: object) -> int | None:
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and shape:
        try:
            return int(shape[0])
        except (TypeError, ValueError):
            return None
    return None


class Loop:
    """The steps of one process. ``write`` saves ``record()`` (None: kept in memory only)."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        write: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.pid = os.getpid()
        self.clock = clock
        self.write = write
        self.rows: list[list[Any]] = []
        self.dropped = 0
        self.fetches = 0
        # kind -> [count, first time, last time]
        self.counters: dict[str, list[float]] = {}
        self.flops: dict[str, Any] | None = None
        self.peak: dict[str, Any] | None = None
        # the torch part (``_capture_torch.TorchPart``): FLOP counting around one step, told of
        # the end of step ``watch`` (-1: of none)
        self.torch: Any = None
        self.watch = -1
        # what this process is to the loop ("DataLoader worker 0"); "" for the program's own
        self.role = ""
        # the kernel's I/O counters of this process at its end (/proc/self/io)
        self.io: dict[str, int] | None = None
        # bytes copied across devices (``_capture_copies.Copies``) and pickled (``_capture_pickles.Pickles``)
        self.copies: Any = None
        self.pickles: Any = None
        self._start: float | None = None
        self._wait = 0.0
        self._samples: int | None = None
        self.ahead: int | None = None  # the samples of the batch a loader fetched ahead (``fetched``)
        self._tokens: int | None = None
        self.pace = WritePace()  # when the record is written next (at most about once a second)

    def waited(self, start: float, end: float) -> None:
        """``start``..``end`` was spent waiting for data (starting an epoch's loader workers)."""
        if self._start is None:
            self._start = start
        self._wait += end - start

    def fetched(self, start: float, end: float, samples: int | None, *, ahead: bool = False) -> None:
        """A batch arrived: ``start``..``end`` was spent waiting for it. ``ahead``: fetched by a
        loader that reads one batch ahead of what it hands the program (accelerate's), so the
        samples counted now are those of the batch fetched before, which the program gets now."""
        self.waited(start, end)
        self.fetches += 1
        if ahead:
            samples, self.ahead = self.ahead, samples
        if samples is not None:
            self._samples = (self._samples or 0) + samples

    def epoch(self, start: float, end: float) -> None:
        """A loader's epoch began (``start``..``end``: starting its workers). Before the first step
        ends, what earlier iterators fetched was a peek, not the step's batch: Keras's ``fit``
        reads one batch to build its metrics and optimizer, then starts the epoch anew."""
        self.waited(start, end)
        if not self.rows and not self.dropped:
            self._samples = self.ahead = None

    def exhausted(self, start: float, end: float) -> None:
        """A loader reading ahead found its epoch's end: the batch it held is handed over now."""
        self.waited(start, end)
        samples, self.ahead = self.ahead, None
        if samples is not None:
            self._samples = (self._samples or 0) + samples

    def count(self, kind: str) -> None:
        now = self.clock()
        counter = self.counters.get(kind)
        if counter is None:
            self.counters[kind] = [1, now, now]
        else:
            counter[0] += 1
            counter[2] = now

    def set_samples(self, samples: int, *, last: bool = False) -> None:
        """The user's count of samples, over the loader's: of the step running, or with ``last`` of
        the step that just ended (an optimizer ended it)."""
        if not last:
            self._samples = samples
        elif self.rows:
            self.rows[-1][3] = samples

    def set_tokens(self, tokens: int, *, last: bool = False) -> None:
        """The user's count of tokens (whatever a token is to the program): of the step running,
        or with ``last`` of the step that just ended."""
        if not last:
            self._tokens = tokens
        elif self.rows:
            self.rows[-1][5] = tokens

    def end_step(self, kind: str, start: float | None = None) -> None:
        """A step ended. ``start``: when the torch tracker saw it begin (its first forward), for
        the first step, which has no previous end to start from."""
        # every step of a loop comes here, each after the step's own work filled the caches: kept
        # to a few attribute reads, the torch part called only at the step it asked for, and the
        # times kept unrounded (the reader rounds them: three round(x, 6) took ~20 us a step in a
        # real loop, ~1 us hot, and int arithmetic ~10 us)
        rows = self.rows
        index = len(rows) + self.dropped
        watched = index == self.watch
        if watched:
            self.torch.step_ending(index)
        now = self.clock()
        begin = self._start
        if start is not None and (begin is None or start < begin):
            begin = start
        kept = len(rows) < MAX_STEPS
        if kept:
            rows.append(
                [now, None if begin is None else now - begin, self._wait, self._samples, kind, self._tokens]
            )
        else:
            self.dropped += 1
        if self.copies is not None:
            self.copies.end_step(kept)
        self._start = now
        self._wait = 0.0
        self._samples = self._tokens = None
        if watched:
            self.torch.step_ended(index)
        if index == STEADY_AFTER - 1:
            sampling = sys.modules.get("memgauge.capture._sampling")  # loaded where lines are sampled
            if sampling is not None:
                sampling.steady_loop()
        if self.pace.due(now):
            self.flush()

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "pid": self.pid,
            "t": self.clock(),
            "steps": self.rows,
            "steps_dropped": self.dropped,
            "fetches": self.fetches,
            "counters": {k: list(v) for k, v in self.counters.items()},
        }
        if self.flops is not None:
            out["flops"] = self.flops
        if self.peak is not None:
            out["peak"] = self.peak
        if self.role:
            out["role"] = self.role
        if self.io is not None:
            out["io"] = self.io
        if self.copies is not None and any(self.copies.counts):
            out["copies"] = self.copies.record()
        if self.pickles is not None and self.pickles.count:
            out["pickles"] = self.pickles.record()
        return out

    def flush(self) -> None:
        self.write = paced_write(self.pace, self.clock, self.write, self.record)

    def at_exit(self) -> None:
        if self.pid != os.getpid():
            return
        if self.torch is not None:
            import contextlib

            # a failed peak measurement must not cost the record
            with contextlib.suppress(Exception):
                self.torch.at_exit()
        if self.rows or self.counters or self.fetches or self.role or self.pickles is not None:
            self.io = read_io()
            self.flush()


def read_io() -> dict[str, int] | None:
    """This process's I/O counters: ``rchar``/``wchar`` (every read and write call) and
    ``read_bytes``/``write_bytes`` (what reached storage); None where /proc has none."""
    try:
        with open("/proc/self/io", encoding="ascii") as f:
            pairs = (line.partition(":") for line in f)
            return {k: int(v) for k, _, v in pairs if k in ("rchar", "wchar", "read_bytes", "write_bytes")}
    except (OSError, ValueError):
        return None


_loop: Loop | None = None
_checked_pid = -1
# this process's pid, kept here (a forked child sets its own): asked at every step's end and every
# batch, os.getpid() is a system call, ~6 us of a real loop's step
_pid = os.getpid()


def _after_fork() -> None:
    global _pid
    _pid = os.getpid()


os.register_at_fork(after_in_child=_after_fork)


def current_loop() -> Loop | None:
    """This process's loop, made on first use when a runner measures the process (None when not:
    ``memgauge.step()`` then costs a global lookup)."""
    global _loop, _checked_pid
    loop = _loop
    pid = _pid
    if loop is not None and loop.pid == pid:
        return loop
    if _checked_pid == pid and loop is None:
        return None
    _checked_pid = pid
    directory = os.environ.get(ENV_EVENTS_DIR, "")
    if not directory:
        _loop = None
        return None
    import atexit

    loop = Loop(write=record_writer(directory, TRAINING))
    atexit.register(loop.at_exit)
    _loop = loop
    return loop


def step(kind: str = "", *, samples: int | None = None, tokens: int | None = None) -> None:
    """Mark the end of a step where no optimizer marks it (``memgauge.step()``), or count one event
    of ``kind`` (``memgauge.step("env")``: RL environment steps, generated items) without ending a
    step. ``samples``: how many samples the step took (over the leading dimension of the batches
    the loader returned); right after an optimizer step it sets that step's count and ends none.
    ``tokens``: the step's tokens, as the program counts them (gives tokens/s), likewise. A no-op
    when nothing is measured."""
    loop = current_loop()
    # looked up, not imported: a tracker exists only once torch tracking is loaded, and importing
    # it from here would close a circle (its hooks import this module)
    tracking = sys.modules.get("memgauge.sections.torch._capture")
    tracker = tracking.active_torch_tracker() if tracking is not None else None
    if kind:
        if loop is not None:
            loop.count(kind)
        return
    if loop is not None and (samples is not None or tokens is not None):
        # right after an optimizer ended the step (nothing ran since): the counts are that step's
        last = (
            tracker is not None and not tracker.active and bool(loop.rows) and loop.rows[-1][4] == "optimizer"
        )
        if samples is not None:
            loop.set_samples(samples, last=last)
        if tokens is not None:
            loop.set_tokens(tokens, last=last)
        if last:
            return
    if tracker is not None:
        tracker.end_step("explicit")  # its on_step ends the loop's step too
    elif loop is not None:
        loop.end_step("explicit")


def timed_iter(iterable: Iterable[T]) -> Iterator[T]:
    """Iterate over ``iterable``, counting the time each ``next`` takes as the loop's data wait and
    each item's leading dimension as its samples: for loaders that are not torch DataLoaders."""
    it = iter(iterable)
    clock = time.monotonic
    while True:
        loop = current_loop()
        t0 = clock()
        try:
            item = next(it)
        except StopIteration:
            return
        if loop is not None:
            loop.fetched(t0, clock(), batch_samples(item))
        yield item
