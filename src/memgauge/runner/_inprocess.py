"""``memgauge.profile()``: measure a block of code in the current process, no child process.

The resident peak is the kernel's ``VmHWM``, reset when the block starts, so it covers exactly the
block. A daemon thread samples resident memory and CPU for the timeline; it reads two small files
per sample and holds the GIL for a few microseconds. ``lines=True`` adds the line sampler of
``memgauge run`` (``_sampler``) for the block, ``children=True`` the descendants (``_descendants``).
"""

from __future__ import annotations

import datetime as _dt
import os
import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from memgauge._version import __version__
from memgauge.capture import (
    ClosedPhase,
    OpenPhase,
    PhaseTracker,
    ProcSelfSource,
    active_tracker,
    listen_metrics,
    program_environment,
    set_tracker,
    unlisten_metrics,
)
from memgauge.model import Attribution, CpuTimes, ExitStatus, Peak, PhaseRecord, ProcessRecord, Profile
from memgauge.runner._inprocess_needs import record_needs
from memgauge.runner._order import capped, leak_suspects_of, order_phases
from memgauge.sections import ordered
from memgauge.watcher import machine_environment

if TYPE_CHECKING:
    from memgauge.capture import MemorySource, Sampler
    from memgauge.model import CaptureWarning
    from memgauge.watcher import Descendants
from memgauge.watcher import TimelineBuilder


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


def _reaped_cpu() -> tuple[float, float]:
    t = os.times()
    return t.children_user, t.children_system


class profile:  # noqa: N801 - used like a function: ``with memgauge.profile() as prof``
    """Measure the current process while the ``with`` block runs.

    After the block, the object holds the :class:`Profile` (``prof.profile``) and can ``save`` it.
    ``source``, ``clock`` and ``cpu`` are injectable so tests get exact figures.

    ``lines=True`` samples the lines of this process for the block, as ``memgauge run`` does
    (``prof.profile.lines``, ``peak.attribution``; the resident size the block started with is the
    pseudo-line ``<before>``); it needs the default ``clock``. Where a sampler already runs in the
    process (under ``memgauge run``) the block gets no lines of its own: the run's profile has them.

    ``children=True`` also samples the descendants of this process (found through
    ``/proc/PID/task/*/children``) at every timeline sample, adds their resident memory to the
    tree's figure and records each one in ``processes`` (its peak is the highest ``VmHWM`` read while
    it lived; for a fork that never exec'd, the highest private memory read, since its ``VmHWM``
    counts the pages it shares with its parent).

    The peak of the block (``peak.resident_bytes``):

    * this process: its ``VmHWM``, reset when the block starts, so exact for the block (method
      ``vmhwm-reset``);
    * with ``children=True`` and at least one descendant seen, the tree: the largest sampled sum
      (this process's resident size plus what each descendant adds, see ``_descendants``) and at
      least this process's exact peak (method ``sampled tree sum + per-process VmHWM``). A
      descendant's spike shorter than the sampling interval can be missed in the sum; its
      ``VmHWM`` read at each sample bounds it while it is alive, and ``error_bound_bytes`` (the
      sum of every process's peak minus the figure) bounds the whole.

    ``start_resident_bytes`` is the tree's resident size when the block began (this process, and
    with ``children=True`` the descendants already running), ``start_process_resident_bytes`` this
    process's alone: ``peak.resident_bytes - start_resident_bytes`` is what the block added (the
    pytest plugin's ``rss``). docs/measurement.md says more.
    """

    def __init__(
        self,
        *,
        interval: float = 0.01,
        source: MemorySource | None = None,
        clock: Callable[[], float] = time.monotonic,
        cpu: Callable[[], tuple[float, float]] = _cpu_times,
        sample: bool = True,
        lines: bool = False,
        children: bool = False,
    ) -> None:
        self._source = source or ProcSelfSource()
        self._clock = clock
        self._cpu = cpu
        self._sample = sample
        self._lines = lines
        self._children = children
        self._line_sampler: Sampler | None = None
        self._lines_dir: str | None = None
        self._descendants: Descendants | None = None
        self._reaped0 = (0.0, 0.0)
        self._notes: list[str] = []
        self._own_sampled = 0
        self._wall = 0.0
        self._ident = 0
        # the tree's resident size when the block began (this process, and its descendants with
        # children=True), and this process's alone: what a caller measures growth from
        self.start_resident_bytes = 0
        self.start_process_resident_bytes = 0
        # the largest sampled tree sum, what each descendant added to it and this process's line
        # then (for attribution, see _descendant_attribution)
        self._tree_max = -1
        self._tree_max_children: dict[int, int] = {}
        self._tree_max_line: tuple[str, int, str] | None = None
        self._cpu_end = self._own_cpu_end = (0.0, 0.0)
        self._builder = TimelineBuilder(interval)
        self._sink = _ListSink()
        self._tracker = PhaseTracker(self._source, self._sink, clock)
        # each section's part of the block (the registry's "block"), in the sections' order: the
        # training section's after torch's, whose optimizer steps end the block's steps
        self._sections: list[Any] = [block() for spec in ordered() if (block := spec.part("block"))]
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
        self._ident = threading.get_ident()
        self._started_at = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        # started before VmHWM is reset: their own set-up is not the block's
        if self._lines:
            self._start_lines()
        if self._children:
            from memgauge.watcher import Descendants

            self._descendants = Descendants()
            self._reaped0 = _reaped_cpu()
        for section in self._sections:
            section.start()
        self._tracker.process_peak = 0
        self._metrics: dict[str, float] = {}
        listen_metrics(self._metrics)
        # a tracker already active (phases of a measured run, an enclosing profile) keeps what the
        # reset below erases, and hears of every reset this profile's phases make
        self._previous = self._tracker.upstream = active_tracker()
        if self._previous is not None:
            self._previous.note_reset(self._source.high_water())
        self._reset = self._source.reset_high_water()
        self._t0 = self._clock()
        self._cpu0 = self._cpu()
        set_tracker(self._tracker)
        self.start_process_resident_bytes, self.start_resident_bytes = self._take_sample()
        if self._sample:
            self._thread = threading.Thread(target=self._run, name="memgauge-sampler", daemon=True)
            self._thread.start()
        return self

    def _start_lines(self) -> None:
        from memgauge.capture import BEFORE_KEY, active_sampler, start_sampler

        if active_sampler() is not None:
            self._notes.append("a line sampler already runs in this process: no lines of the block's own")
            return
        import tempfile

        self._lines_dir = tempfile.mkdtemp(prefix=f"memgauge-lines{os.getpid()}-")
        self._line_sampler = start_sampler(self._lines_dir, base_key=BEFORE_KEY)
        if self._line_sampler is None:
            self._notes.append("the line sampler could not start")

    def _take_sample(self) -> tuple[int, int]:
        """Takes one timeline sample; returns this process's resident size and the tree's."""
        rss = self._source.resident()
        t = self._clock()
        own_pid = os.getpid()
        per_process = {own_pid: rss}
        self._own_sampled = max(self._own_sampled, rss)
        if self._descendants is not None:
            per_process.update(self._descendants.sample(t))
        user, system = self._tree_cpu()
        tree = sum(per_process.values())
        if self._descendants is not None and self._lines_dir is not None and tree > self._tree_max:
            self._tree_max = tree
            self._tree_max_children = {p: b for p, b in per_process.items() if p != own_pid and b > 0}
            self._tree_max_line = self._running_line() if self._tree_max_children else None
        self._builder.add(t - self._t0, tree, user - self._cpu0[0], system - self._cpu0[1], per_process)
        return rss, tree

    def _running_line(self) -> tuple[str, int, str] | None:
        """The innermost line of the program's own code that the block's thread is on."""
        from memgauge.capture import is_library, is_own

        frame = sys._current_frames().get(self._ident)
        try:
            while frame is not None:
                code = frame.f_code
                if not is_own(code.co_filename) and not is_library(code.co_filename):
                    return code.co_filename, frame.f_lineno or 0, code.co_name
                frame = frame.f_back
            return None
        finally:
            del frame  # no frame kept: it would keep the program's locals alive (see _sampler)

    def _tree_cpu(self) -> tuple[float, float]:
        user, system = self._cpu()
        if self._descendants is not None:
            # descendants reaped meanwhile (os.times) and those still running (/proc)
            reaped = _reaped_cpu()
            alive = self._descendants.cpu_seconds()
            user += reaped[0] - self._reaped0[0] + alive[0]
            system += reaped[1] - self._reaped0[1] + alive[1]
        return user, system

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
        set_tracker(self._previous)
        unlisten_metrics(self._metrics)
        try:
            self._take_sample()
            # the end of the block, before the line sampler's stop (up to one interval)
            self._wall = self._clock() - self._t0
            self._cpu_end = self._tree_cpu()
            self._own_cpu_end = self._cpu()
            if self._line_sampler is not None:
                self._line_sampler.stop()  # its final sample and write
            self.profile = self._build()
        finally:
            for section in self._sections:
                section.close()  # a block whose profile could not be built: its loop ends too
            if self._descendants is not None:
                self._descendants.close()
            if self._lines_dir is not None:
                import shutil

                shutil.rmtree(self._lines_dir, ignore_errors=True)

    def _build(self) -> Profile:
        wall = self._wall
        user, system = self._cpu_end
        timeline = self._builder.build()
        hwm = self._tracker.high_water_seen()
        own = max(hwm, self._own_sampled) if self._reset else self._own_sampled
        sampled = max(timeline.tree_resident_bytes, default=0)
        pid = os.getpid()
        children = self._descendants.process_records(self._t0) if self._descendants is not None else []
        notes = list(self._notes)
        if self._reset and children:
            # the process exact, the descendants sampled: the tree's peak is at least both
            resident = max(own, sampled)
            bound = own + sum(c.peak_resident_bytes for c in children)
            peak = Peak(
                resident_bytes=resident,
                method="sampled tree sum + per-process VmHWM",
                error_bound_bytes=max(0, bound - resident),
            )
        elif self._reset:
            peak = Peak(resident_bytes=max(own, sampled), method="vmhwm-reset", error_bound_bytes=0)
        else:
            peak = Peak(
                resident_bytes=sampled,
                method="sampled",
                error_bound_bytes=max(0, hwm - self._own_sampled)
                + sum(c.peak_resident_bytes for c in children),
            )
            notes.append("VmHWM could not be reset; the upper bound is the peak since the process started")
        peak.notes = notes
        peak.largest_process_bytes = max([own, *(c.peak_resident_bytes for c in children)])
        peak.sampled_tree_bytes = sampled
        if timeline.tree_resident_bytes:
            i = timeline.tree_resident_bytes.index(sampled)
            peak.at_seconds = timeline.t_seconds[i]
        record_needs(peak)
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
            pid=pid,
            ppid=os.getppid(),
            cmdline=list(sys.orig_argv) if hasattr(sys, "orig_argv") else list(sys.argv),
            start_seconds=0.0,
            end_seconds=wall,
            peak_resident_bytes=own if children else peak.resident_bytes,
            cpu_user_seconds=self._own_cpu_end[0] - self._cpu0[0],
            cpu_system_seconds=self._own_cpu_end[1] - self._cpu0[1],
            peak_exact=self._reset,
        )
        profile = Profile(
            command=me.cmdline,
            exit=ExitStatus(code=None),
            wall_seconds=wall,
            cpu=CpuTimes(user - self._cpu0[0], system - self._cpu0[1]),
            peak=peak,
            processes=[me, *children],
            phases=phases,
            timeline=timeline,
            environment={**machine_environment(), **program_environment(), "mode": "in-process"},
            started_at=self._started_at,
            memgauge_version=__version__,
            metrics=dict(self._metrics),
        )
        if self._lines_dir is not None:
            from memgauge.capture import read_lines

            warnings: list[CaptureWarning] = []
            keep = None if self._children else {pid}
            data = read_lines(self._lines_dir, self._t0, keep, warnings=warnings)
            profile.lines = data.lines
            profile.peak.attribution = data.attribution + self._descendant_attribution(data.sampled_peaks)
            profile.peak.attribution.sort(key=lambda a: -a.bytes)
            profile.leaks = leak_suspects_of(data, self._t0)
            profile.imports = data.imports
            profile.warnings = capped(warnings)
        for section in self._sections:
            section.fill(profile, self._t0)
        return profile

    def _descendant_attribution(self, sampled: dict[int, int]) -> list[Attribution]:
        """Descendants without lines of their own (a program started with ``subprocess``) at the
        largest sampled tree sum: charged to the line this process was on then, the line that
        started the descendant or waits for it."""
        if self._tree_max_line is None:
            return []
        from memgauge.capture import source_line

        file, line, function = self._tree_max_line
        return [
            Attribution(
                pid=pid, file=file, line=line, function=function, bytes=size, source=source_line(file, line)
            )
            for pid, size in self._tree_max_children.items()
            if pid not in sampled
        ]

    def save(self, path: str | os.PathLike[str]) -> None:
        if self.profile is None:
            raise RuntimeError("the profile is written when the `with memgauge.profile()` block ends")
        self.profile.save(path)
