"""``memgauge.profile()``: measure a block of code in the current process, no child process.

The resident peak is the kernel's ``VmHWM``, reset when the block starts, so it covers exactly the
block. A daemon thread samples resident memory and CPU for the timeline; it reads two small files
per sample and holds the GIL for a few microseconds.
"""

from __future__ import annotations

import datetime as _dt
import os
import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING

from memgauge._profile import CpuTimes, ExitStatus, Peak, PhaseRecord, ProcessRecord, Profile
from memgauge._version import __version__
from memgauge.capture import _phases
from memgauge.capture._assemble import order_phases
from memgauge.capture._environment import machine_environment
from memgauge.capture._phases import ClosedPhase, OpenPhase, PhaseTracker, ProcSelfSource
from memgauge.capture._program import program_environment

if TYPE_CHECKING:
    from memgauge.capture._protocols import MemorySource
from memgauge.capture._timeline import TimelineBuilder


class _ListSink:
    def __init__(self) -> None:
        self.closed: list[ClosedPhase] = []
        self.opened: dict[int, OpenPhase] = {}

    def phase_started(self, phase: OpenPhase, high_water_before: int) -> None:
        self.opened[phase.id] = phase

    def high_water_reset(self, high_water_before: int) -> None:
        pass  # the tracker itself folds it into its phases and its process peak

    def phase_ended(self, closed: ClosedPhase) -> None:
        self.opened.pop(closed.phase.id, None)
        self.closed.append(closed)


def _cpu_times() -> tuple[float, float]:
    t = os.times()
    return t.user, t.system


class profile:  # noqa: N801 - used like a function: ``with memgauge.profile() as prof``
    """Measure the current process while the ``with`` block runs.

    After the block, the object holds the :class:`Profile` (``prof.profile``) and can ``save`` it.
    ``source``, ``clock`` and ``cpu`` are injectable so tests get exact figures.
    """

    def __init__(
        self,
        *,
        interval: float = 0.01,
        source: MemorySource | None = None,
        clock: Callable[[], float] = time.monotonic,
        cpu: Callable[[], tuple[float, float]] = _cpu_times,
        sample: bool = True,
    ) -> None:
        self._source = source or ProcSelfSource()
        self._clock = clock
        self._cpu = cpu
        self._sample = sample
        self._builder = TimelineBuilder(interval)
        self._sink = _ListSink()
        self._tracker = PhaseTracker(self._source, self._sink, clock)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._previous: PhaseTracker | None = None
        self._t0 = 0.0
        self._cpu0 = (0.0, 0.0)
        self._reset = False
        self._started_at = ""
        self._aborted: set[int] = set()
        self.profile: Profile | None = None

    def __enter__(self) -> profile:
        self._started_at = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        self._tracker.process_peak = 0
        # a tracker already active (phases of a measured run, an enclosing profile) keeps what the
        # reset below erases, and hears of every reset this profile's phases make
        self._previous = self._tracker.upstream = _phases.active_tracker()
        if self._previous is not None:
            self._previous.note_reset(self._source.high_water())
        self._reset = self._source.reset_high_water()
        self._t0 = self._clock()
        self._cpu0 = self._cpu()
        _phases.set_tracker(self._tracker)
        self._take_sample()
        if self._sample:
            self._thread = threading.Thread(target=self._run, name="memgauge-sampler", daemon=True)
            self._thread.start()
        return self

    def _take_sample(self) -> None:
        rss = self._source.resident()
        user, system = self._cpu()
        self._builder.add(
            self._clock() - self._t0, rss, user - self._cpu0[0], system - self._cpu0[1], {os.getpid(): rss}
        )

    def _run(self) -> None:
        while not self._stop.wait(self._builder.interval):
            self._take_sample()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        # phases opened and never closed (a generator abandoned mid-phase) are kept, marked unfinished
        for opened in sorted(self._sink.opened.values(), key=lambda o: -o.depth):
            self._aborted.add(opened.id)
            self._tracker.end(opened)
        _phases.set_tracker(self._previous)
        self._take_sample()
        self.profile = self._build()

    def _build(self) -> Profile:
        wall = self._clock() - self._t0
        user, system = self._cpu()
        timeline = self._builder.build()
        hwm = self._tracker.high_water_seen()
        sampled = max(timeline.tree_resident_bytes, default=0)
        if self._reset:
            peak = Peak(resident_bytes=max(hwm, sampled), method="vmhwm-reset", error_bound_bytes=0)
        else:
            peak = Peak(
                resident_bytes=sampled,
                method="sampled",
                error_bound_bytes=max(0, hwm - sampled),
                notes=["VmHWM could not be reset; the upper bound is the peak since the process started"],
            )
        peak.largest_process_bytes = peak.resident_bytes
        peak.sampled_tree_bytes = sampled
        if timeline.tree_resident_bytes:
            i = timeline.tree_resident_bytes.index(sampled)
            peak.at_seconds = timeline.t_seconds[i]
        pid = os.getpid()
        phases = order_phases(
            [
                (
                    c.phase.id,
                    c.phase.parent,
                    PhaseRecord(
                        name=c.phase.name,
                        pid=pid,
                        start_seconds=c.phase.start - self._t0,
                        end_seconds=c.end - self._t0,
                        peak_resident_bytes=c.peak,
                        start_resident_bytes=c.phase.start_resident,
                        end_resident_bytes=c.end_resident,
                        depth=c.phase.depth,
                        thread=c.phase.thread,
                        peak_exact=c.exact,
                        complete=c.phase.id not in self._aborted,
                    ),
                )
                for c in self._sink.closed
            ]
        )
        me = ProcessRecord(
            pid=os.getpid(),
            ppid=os.getppid(),
            cmdline=list(sys.orig_argv) if hasattr(sys, "orig_argv") else list(sys.argv),
            start_seconds=0.0,
            end_seconds=wall,
            peak_resident_bytes=peak.resident_bytes,
            cpu_user_seconds=user - self._cpu0[0],
            cpu_system_seconds=system - self._cpu0[1],
            peak_exact=self._reset,
        )
        return Profile(
            command=me.cmdline,
            exit=ExitStatus(code=None),
            wall_seconds=wall,
            cpu=CpuTimes(me.cpu_user_seconds, me.cpu_system_seconds),
            peak=peak,
            processes=[me],
            phases=phases,
            timeline=timeline,
            environment={**machine_environment(), **program_environment(), "mode": "in-process"},
            started_at=self._started_at,
            memgauge_version=__version__,
        )

    def save(self, path: str | os.PathLike[str]) -> None:
        if self.profile is None:
            raise RuntimeError("the profile is written when the `with memgauge.profile()` block ends")
        self.profile.save(path)
