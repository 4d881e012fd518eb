"""What measuring a run cost (``Profile.overhead``): memgauge's steps before the program's first
line and after its last, each timed on the monotonic clock the measured process reads too, and the
CPU time of memgauge's own process and of its threads in the measured processes."""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from memgauge.model import Overhead
    from memgauge.runner._state import RunState


# a process older than this when memgauge's command begins ran something else before it exec'd
# python (a shell script's ``exec``, a container's entrypoint): the kernel keeps the start time
# across exec, so its age is not memgauge's start-up (an interpreter and memgauge's imports take
# well under a second, seconds only on a machine many times oversubscribed)
_EXEC_SUSPECT_SECONDS = 5.0


def process_started() -> float | None:
    """When this process started, on ``time.monotonic``'s clock (to the kernel's clock tick,
    10 ms on most Linux), so that the interpreter's start and memgauge's imports are timed too;
    None where ``/proc`` cannot say, or where the process is too old to have begun as memgauge."""
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        # the fields after the command (which may hold spaces and parentheses): starttime is 22nd
        ticks = int(stat[stat.rindex(b")") + 2 :].split()[19])
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None
    if age > _EXEC_SUSPECT_SECONDS:
        return None
    return time.monotonic() - max(age, 0.0)


def own_process_cpu() -> float:
    """This process's CPU seconds so far, user and system (its threads included)."""
    times = os.times()
    return times.user + times.system


def overhead_of(
    state: RunState,
    *,
    process_start: float | None,
    entered: float,
    spawned: float,
    reaped: float,
    assembled: float,
    cpu_before: float,
) -> Overhead:
    """The record: ``process_start`` (None: memgauge used as a library, its start-up not this
    run's), ``entered`` (``run_program`` called), ``spawned``, ``reaped`` and ``assembled`` on the
    monotonic clock; ``cpu_before``: this process's CPU seconds when ``run_program`` was called."""
    from memgauge.model import Overhead, OwnCpu

    steps: dict[str, float] = {}
    if process_start is not None:
        steps["start-up"] = entered - process_start
    steps["set-up"] = spawned - entered
    started = state.program_times.get("started")
    if started is not None:
        steps["bootstrap"] = started - spawned
    ended = state.program_times.get("ended")
    if ended is not None:
        steps["shutdown"] = reaped - ended
    steps["assembly"] = assembled - reaped
    # a clock read in two processes a few microseconds apart can order them the wrong way
    steps = {name: round(max(seconds, 0.0), 6) for name, seconds in steps.items()}
    spent = own_process_cpu() - (0.0 if process_start is not None else cpu_before)
    # its start-up included where it was started for this run; its NVML thread included
    cpu = [OwnCpu("memgauge process", os.getpid(), round(spent, 6))]
    cpu += [OwnCpu(name, pid, round(seconds, 6)) for name, pid, seconds in state.own_cpu]
    return Overhead(steps, cpu)


def prewarm(also: tuple[str, ...] = ()) -> Callable[[], None]:
    """Load the assembly's modules, then the modules ``also`` names (the caller's, for after the
    run: the report's renderer), on a thread of their own while the program starts, on the other
    core, rather than after it ends, where every millisecond is added to the run. A thread, not the
    main loop: that keeps sampling (it waits for the GIL at most a switch interval, 5 ms, where an
    import in the main loop once left a 130 ms gap a short-lived child fell into). Only where the
    modules are compiled (``__pycache__``, as an installed memgauge has it): compiling one from
    source holds the GIL for its whole compile, and the samples would wait for it. Its signals
    stay blocked, as the thread that starts it has them. Returns the wait for it, which the
    caller calls before it imports anything itself: two threads importing one graph of modules can each hold
    a module the other waits for, and Python then hands one of them a module half run
    ("cannot import name ..."; seen 4 runs in 60 once the report's modules were loaded here)."""
    import importlib.util
    import threading

    from memgauge.runner import _state

    try:
        # one module of the package stands for all: compiled together, by pip or compileall
        compiled = os.path.exists(importlib.util.cache_from_source(_state.__file__ or ""))
    except (NotImplementedError, ValueError):
        compiled = False
    if not compiled:
        return no_wait

    def load() -> None:
        import contextlib

        with contextlib.suppress(Exception):  # assembly imports them again and reports what fails
            import memgauge.runner._assemble  # noqa: F401

            # the outside sampler's join, which runs before the assembly (cheap where unused)
            from memgauge.capture import join_outside_lines  # noqa: F401

            for name in also:
                importlib.import_module(name)

    thread = threading.Thread(target=load, name="memgauge-prewarm", daemon=True)
    thread.start()
    return thread.join


def no_wait() -> None:
    """The wait for a prewarm that loads nothing."""
