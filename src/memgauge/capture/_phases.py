"""``memgauge.phase``: named spans with exact per-phase resident peaks.

At a phase start the process's ``VmHWM`` is folded into every open phase and then reset, so at a
phase end ``VmHWM`` covers exactly the time since the latest reset. Folding into *every* open phase
(all threads, all nesting levels) keeps nested and concurrent phases exact even though the kernel
keeps one high-water mark per process.

When nothing is measuring, ``phase`` costs one small object and two method calls.

This module is imported by every measured program that uses ``memgauge.phase``, so it imports
neither ``typing`` nor ``dataclasses`` at run time (together ~14 ms and a few hundred KB, all of
which would be measured as the program's own).
"""

from __future__ import annotations

import _thread
import os
import sys
import time

from memgauge._env import ENV_EVENTS_DIR
from memgauge.capture import _procfs
from memgauge.capture._events import EventWriter
from memgauge.capture._proc_io import io_between, self_io
from memgauge.capture._wire import EV_HWM_RESET, EV_PHASE_END, EV_PHASE_START

# not `from typing import TYPE_CHECKING`: importing typing costs the measured process ~8 ms
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Protocol, TypeVar, overload

    from memgauge.capture._protocols import MemorySource

    F = TypeVar("F", bound=Callable[..., Any])

    class PhaseSink(Protocol):
        """Where phases go as they start and end (the events file, or an in-process profile)."""

        def phase_started(self, phase: OpenPhase, high_water_before: int) -> None: ...

        def phase_ended(self, closed: ClosedPhase) -> None: ...

        def high_water_reset(self, high_water_before: int) -> None: ...


# what follows phases beside their sink, added by a section as it starts in this process (the GPU
# section's allocator windows, once the program's torch is tracked): (started(phase), ended(phase,
# name)) each, called as the phase starts and ends
_listeners: list[tuple[Callable[[OpenPhase], None], Callable[[OpenPhase, str], None]]] = []


def add_phase_listener(started: Callable[[OpenPhase], None], ended: Callable[[OpenPhase, str], None]) -> None:
    """Call ``started`` and ``ended`` at every phase's start and end in this process (once)."""
    if (started, ended) not in _listeners:
        _listeners.append((started, ended))


class ProcSelfSource:
    """The kernel's own counters for this process."""

    def resident(self) -> int:
        return _procfs.read_resident("self") or 0

    def high_water(self) -> int:
        return _procfs.read_high_water("self") or 0

    def reset_high_water(self) -> bool:
        return _procfs.reset_high_water("self")


class OpenPhase:
    __slots__ = (
        "depth",
        "id",
        "name",
        "parent",
        "peak",
        "reset",
        "start",
        "start_high_water",
        "start_resident",
        "thread",
    )

    def __init__(
        self,
        id: int,
        name: str,
        parent: int | None,
        depth: int,
        thread: str,
        start: float,
        start_resident: int,
        start_high_water: int,
        reset: bool,
        peak: int = 0,
    ) -> None:
        self.id, self.name, self.parent, self.depth, self.thread = id, name, parent, depth, thread
        self.start, self.start_resident, self.start_high_water = start, start_resident, start_high_water
        self.reset, self.peak = reset, peak


class ClosedPhase:
    __slots__ = ("end", "end_resident", "exact", "peak", "phase")

    def __init__(self, phase: OpenPhase, end: float, end_resident: int, peak: int, exact: bool) -> None:
        self.phase, self.end, self.end_resident, self.peak, self.exact = phase, end, end_resident, peak, exact


class PhaseTracker:
    def __init__(
        self,
        source: MemorySource,
        sink: PhaseSink,
        clock: Callable[[], float] = time.monotonic,
        upstream: PhaseTracker | None = None,
    ) -> None:
        self.source = source
        self.sink = sink
        self.clock = clock
        # a tracker that was active when this one started (memgauge.profile() inside a measured
        # run or inside another profile): it must hear of every reset this one makes
        self.upstream = upstream
        self._open: dict[int, OpenPhase] = {}
        self._stacks: dict[int, list[int]] = {}
        self._next_id = 0
        self._lock = _thread.allocate_lock()
        # the highest VmHWM this tracker saw before resetting it: the process's peak survives resets
        self.process_peak = 0

    def note_reset(self, high_water_before: int) -> None:
        """Someone else is about to reset VmHWM: keep what it would erase."""
        with self._lock:
            self._fold(high_water_before)
            self.sink.high_water_reset(high_water_before)

    def _fold(self, hwm: int) -> None:
        self.process_peak = max(self.process_peak, hwm)
        for o in self._open.values():
            o.peak = max(o.peak, hwm)
        if self.upstream is not None:
            self.upstream.note_reset(hwm)

    def start(self, name: str) -> OpenPhase:
        with self._lock:
            t = self.clock()
            hwm = self.source.high_water()
            self._fold(hwm)
            reset = self.source.reset_high_water()
            rss = self.source.resident()
            stack = self._stacks.setdefault(_thread.get_ident(), [])
            phase = OpenPhase(
                id=self._next_id,
                name=name,
                parent=stack[-1] if stack else None,
                depth=len(stack),
                thread=_thread_name(),
                start=t,
                start_resident=rss,
                start_high_water=rss if reset else hwm,
                reset=reset,
                peak=rss,
            )
            self._next_id += 1
            self._open[phase.id] = phase
            stack.append(phase.id)
            self.sink.phase_started(phase, hwm)
            for started, _ in _listeners:
                started(phase)  # torch's allocator peaks, folded and reset as VmHWM is
            return phase

    def end(self, phase: OpenPhase) -> ClosedPhase:
        with self._lock:
            # first: the sink's I/O counters are read before memgauge's own reads of /proc
            mark = getattr(self.sink, "phase_ending", None)
            if mark is not None:
                mark(phase.id)
            t = self.clock()
            hwm = self.source.high_water()
            rss = self.source.resident()
            self._open.pop(phase.id, None)
            stack = self._stacks.get(_thread.get_ident(), [])
            if phase.id in stack:
                stack.remove(phase.id)
            if phase.reset:
                peak, exact = max(phase.peak, hwm), True
            elif hwm > phase.start_high_water:
                # VmHWM rose while the phase was open, so its current value was reached in it
                peak, exact = hwm, True
            else:
                peak, exact = max(phase.peak, rss), False
            for o in self._open.values():
                o.peak = max(o.peak, peak)
            closed = ClosedPhase(phase=phase, end=t, end_resident=rss, peak=peak, exact=exact)
            for _, ended in _listeners:
                ended(phase, phase.name)
            self.sink.phase_ended(closed)
            return closed

    def high_water_seen(self) -> int:
        """The process's resident peak over the tracker's life, resets included."""
        return max(self.process_peak, self.source.high_water())


class EventSink:
    """Sends phase events to the runner of ``memgauge run`` (see ``_events``, ``_wire``)."""

    def __init__(self, writer: EventWriter) -> None:
        self._writer = writer
        # each open phase's I/O counters at its start (``_proc_io``), read after its event;
        # at its end, what it read and wrote
        self._io: dict[int, Any] = {}

    def phase_started(self, phase: OpenPhase, high_water_before: int) -> None:
        self._writer.write(
            {
                "ev": EV_PHASE_START,
                "t": phase.start,
                "id": phase.id,
                "name": phase.name,
                "parent": phase.parent,
                "depth": phase.depth,
                "thread": phase.thread,
                "rss": phase.start_resident,
                "hwm_before": high_water_before,
                "reset": phase.reset,
            }
        )
        self._io[phase.id] = self_io()

    def high_water_reset(self, high_water_before: int) -> None:
        self._writer.write({"ev": EV_HWM_RESET, "t": time.monotonic(), "hwm_before": high_water_before})

    def phase_ending(self, phase_id: int) -> None:
        """The phase's I/O, read as its end begins (before the reads of VmHWM and RSS)."""
        self._io[phase_id] = io_between(self._io.get(phase_id), self_io())

    def phase_ended(self, closed: ClosedPhase) -> None:
        io = self._io.pop(closed.phase.id, None)
        event = {
            "ev": EV_PHASE_END,
            "t": closed.end,
            "id": closed.phase.id,
            "peak": closed.peak,
            "rss": closed.end_resident,
            "exact": closed.exact,
        }
        if io is not None:
            event["io"] = io
        self._writer.write(event)


def _thread_name() -> str:
    """threading's name of this thread; a process that has not imported threading (memgauge does
    not: ~5 ms of every measured process) runs no thread but its main one."""
    threading = sys.modules.get("threading")
    return threading.current_thread().name if threading is not None else "MainThread"


_tracker: PhaseTracker | None = None
_env_checked = False
_activate_lock = _thread.allocate_lock()


def active_tracker() -> PhaseTracker | None:
    """The tracker phases report to: set by ``memgauge.profile()``, or created on first use in a
    process that ``memgauge run`` measures (it finds ``MEMGAUGE_EVENTS_DIR`` in its environment)."""
    global _env_checked, _tracker
    if _tracker is not None or _env_checked:
        return _tracker
    with _activate_lock:
        if not _env_checked:
            directory = os.environ.get(ENV_EVENTS_DIR)
            if directory and os.path.isdir(directory) and _tracker is None:
                _tracker = PhaseTracker(ProcSelfSource(), EventSink(EventWriter(directory)))
            _env_checked = True
    return _tracker


def set_tracker(tracker: PhaseTracker | None) -> PhaseTracker | None:
    """Install ``tracker`` (None: the environment decides again); returns the previous one."""
    global _env_checked, _tracker
    previous = _tracker
    _tracker = tracker
    _env_checked = tracker is not None
    return previous


def _after_fork_in_child() -> None:
    # a forked child must not inherit its parent's open phases or lock state
    global _tracker, _activate_lock
    _activate_lock = _thread.allocate_lock()
    if _tracker is not None:
        _tracker = PhaseTracker(_tracker.source, _tracker.sink, _tracker.clock, _tracker.upstream)


os.register_at_fork(after_in_child=_after_fork_in_child)


_CO_GENERATOR, _CO_COROUTINE = 0x20, 0x80  # inspect's flags, without importing inspect


class Phase:
    """Context manager and decorator returned by :func:`phase`."""

    __slots__ = ("_open", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        # created on first use: the no-op path allocates nothing but the object itself. Entries
        # carry their thread, so one Phase object shared by threads closes each thread's own phase.
        self._open: list[tuple[int, PhaseTracker, OpenPhase]] | None = None

    def __enter__(self) -> Phase:
        tracker = _tracker if _env_checked else active_tracker()
        if tracker is not None:
            if self._open is None:
                self._open = []
            self._open.append((_thread.get_ident(), tracker, tracker.start(self.name)))
        return self

    def __exit__(self, *exc: object) -> None:
        if self._open:
            me = _thread.get_ident()
            for i in range(len(self._open) - 1, -1, -1):
                if self._open[i][0] == me:
                    _, tracker, opened = self._open.pop(i)
                    tracker.end(opened)
                    return

    def __call__(self, func: F) -> F:
        import functools

        name = self.name
        flags = getattr(getattr(func, "__code__", None), "co_flags", 0)

        if flags & _CO_COROUTINE:

            async def awrapper(*args: Any, **kwargs: Any) -> Any:
                tracker = _tracker if _env_checked else active_tracker()
                if tracker is None:
                    return await func(*args, **kwargs)
                opened = tracker.start(name)
                try:
                    return await func(*args, **kwargs)
                finally:
                    tracker.end(opened)

            return functools.wraps(func)(awrapper)  # type: ignore[return-value]

        if flags & _CO_GENERATOR:

            def gwrapper(*args: Any, **kwargs: Any) -> Any:
                tracker = _tracker if _env_checked else active_tracker()
                if tracker is None:
                    return (yield from func(*args, **kwargs))
                opened = tracker.start(name)
                try:
                    return (yield from func(*args, **kwargs))
                finally:
                    tracker.end(opened)

            return functools.wraps(func)(gwrapper)  # type: ignore[return-value]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            tracker = _tracker if _env_checked else active_tracker()
            if tracker is None:
                return func(*args, **kwargs)
            opened = tracker.start(name)
            try:
                return func(*args, **kwargs)
            finally:
                tracker.end(opened)

        return wrapper  # type: ignore[return-value]


if TYPE_CHECKING:

    @overload
    def phase(name: str) -> Phase: ...

    @overload
    def phase(name: F) -> F: ...


def phase(name: str | F) -> Phase | F:
    """Mark a phase of a run: ``with memgauge.phase("fit"): ...``, ``@memgauge.phase("fit")`` or
    bare ``@memgauge.phase`` (named after the function). A no-op when nothing is measuring."""
    if callable(name):
        return Phase(getattr(name, "__qualname__", repr(name)))(name)
    return Phase(name)
