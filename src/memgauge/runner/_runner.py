"""Run a program in a child process under measurement and return its :class:`Profile`.

The child inherits stdin, stdout, stderr, the working directory and the environment, and runs in
memgauge's process group, so a terminal's Ctrl-C reaches it directly. Signals sent to memgauge
itself (``kill``) are forwarded; signals the kernel sends to the whole foreground group are not
forwarded again. The main thread blocks those signals and waits for them with ``sigtimedwait``
between samples, so there is no signal-handler race and no sampler thread.

memgauge is made a child subreaper while the program runs, so orphaned grandchildren stay in the tree
it watches (and are reaped by it). Used as a library, ``run_program`` therefore assumes the calling
process starts no other children while it runs.

What stands between the program and the host, nothing or a sandbox, is an ``Isolation``
(``memgauge.isolation``), which ``run_program`` drives through the run without knowing which.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

from memgauge._env import ENV_ALLOC, ENV_EVENTS_DIR, ENV_LINES, ENV_LINES_OUTSIDE, ENV_TORCH
from memgauge._errors import CommandNotExecutableError, CommandNotFoundError, LimitError
from memgauge.capture import AUTOSTART_DIR
from memgauge.isolation import HardLimits
from memgauge.runner._ahead import take_group_ahead
from memgauge.runner._options import RunOptions
from memgauge.runner._overhead import no_wait, overhead_of, own_process_cpu, prewarm
from memgauge.runner._run_records import record_enforcement, record_group_counters
from memgauge.runner._state import RunState
from memgauge.runner._target import Target
from memgauge.runner._waiting import WAITED, reap, watch
from memgauge.watcher import create_memory_group

TYPE_CHECKING = False  # not typing's: loaded before the program starts (docs/benchmarks.md)
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable, Iterable, Sequence

    from memgauge.isolation import Isolation
    from memgauge.model import Profile
    from memgauge.watcher import MemoryGroup, OutsideLines, TimelineBuilder, TreeWatcher

# Only what starting the program needs is imported above: the modules that sample, assemble and
# describe the run (dataclasses, json, ...) are imported once the program runs, on the other core,
# instead of delaying its start.

_PR_SET_CHILD_SUBREAPER = 36


def _set_subreaper(on: bool) -> None:
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0)


def _global_oom_kills() -> int:
    try:
        with open("/proc/vmstat") as f:
            for line in f:
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _instrument(env: dict[str, str], options: RunOptions) -> None:
    """Ask every Python process of the run to measure itself: the ``sitecustomize`` in
    ``capture/_autostart`` starts the sampler (and the allocation tracker) wherever Python starts."""
    if options.lines != "off":
        env[ENV_LINES] = "lib" if options.lines == "lib" else "1"
    if options.alloc:
        env[ENV_ALLOC] = "1"
    env[ENV_TORCH] = options.torch
    if options.lines != "off" or options.alloc:
        autostart = AUTOSTART_DIR
        current = env.get("PYTHONPATH")
        env["PYTHONPATH"] = autostart + (os.pathsep + current if current else "")


def _choose_line_sampler(options: RunOptions) -> str | None:
    """None when the lines are read from outside (py-spy); else the in-process sampler's
    description, with why, for the profile."""
    if options.lines == "off":
        return "off"
    if options.line_sampler in ("", "inside"):
        return "in-process (asked for)" if options.line_sampler else "in-process (the default)"
    if options.sandbox is not None and options.line_sampler != "outside":
        return "in-process (sandboxed program)"
    from memgauge.watcher import outside_refusal

    why = outside_refusal()
    return None if why is None else f"in-process ({why})"


def _outside_lines(
    line_sampler: str | None,
    env: dict[str, str],
    events_dir: str,
    options: RunOptions,
    clock: Callable[[], float],
) -> OutsideLines | None:
    """The outside sampler where ``_choose_line_sampler`` chose it: py-spy's process made first,
    waiting for the program's pid, so that the watcher knows it is not the program's before its
    first sample; the program's Python processes told to wait for it."""
    if line_sampler is not None:
        return None
    env[ENV_LINES_OUTSIDE] = str(os.getpid())
    from memgauge.watcher import OutsideLines

    return OutsideLines(events_dir, lib=options.lines == "lib", clock=clock)


def _outside_cpu(state: RunState, outside: OutsideLines) -> None:
    """py-spy's CPU time is memgauge's own, not the program's: out of the reaped processes and into
    the overhead, whoever reaped it (the loop, when it exited early, or ``finish``)."""
    spy = state.reaped.pop(outside.pid or -1, None)
    seconds = outside.cpu_seconds if spy is None else spy.user + spy.system
    if outside.pid is not None and seconds is not None:
        state.own_cpu.append(("py-spy (outside sampler)", outside.pid, seconds))


def _memory_group(options: RunOptions) -> tuple[MemoryGroup | None, str]:
    """The run's memory cgroup, limited to ``memory_limit_bytes`` where given, or None and why
    not; a LimitError where that limit cannot be set (the group made for it removed again)."""
    group, reason = None, "disabled with --cgroup off"
    if options.cgroup != "off":
        # made as the command started, where it was (a sandbox's mounts come first: never then)
        ahead = take_group_ahead(options.cgroup) if options.sandbox is None else None
        group, reason = ahead or create_memory_group(options.cgroup)
    if options.memory_limit_bytes is None:
        return group, reason
    if group is None:
        raise LimitError(f"cannot enforce a memory limit without a cgroup: {reason}")
    try:
        group.set_limit(options.memory_limit_bytes)
    except OSError as e:
        group.close()
        raise LimitError(f"cannot set the cgroup memory limit: {e.strerror}") from e
    return group, reason


def _limited_by_group(limits: HardLimits | None, group: MemoryGroup | None) -> bool:
    """Whether an enforced memory limit is the group's own (else the watchdog alone guards it;
    the profile says which did)."""
    if limits is None or limits.memory_bytes is None or group is None:
        return False
    try:
        group.set_limit(limits.memory_bytes)
    except OSError:
        return False
    return True


def _record_group(
    profile: Profile,
    group: MemoryGroup | None,
    options: RunOptions,
    limits: HardLimits | None,
    by_group: bool,
) -> None:
    """The group's counters into the profile, with the limit it had: ``memory_limit_bytes`` and
    the enforced one, the lower."""
    if group is None:
        return
    limit = options.memory_limit_bytes
    if by_group and limits is not None and limits.memory_bytes is not None:
        limit = limits.memory_bytes if limit is None else min(limit, limits.memory_bytes)
    record_group_counters(profile, group, limit)


def _watcher(
    pid: int, group: MemoryGroup | None, limits: HardLimits | None, options: RunOptions, t0: float
) -> tuple[TimelineBuilder, TreeWatcher]:
    """The timeline and the tree's watcher (sampling at most every watchdog interval under an
    enforced limit; the accessed bits left alone under a memory limit: clearing them steers
    reclaim)."""
    from memgauge.watcher import TimelineBuilder, TreeWatcher

    max_interval = HardLimits.WATCHDOG_INTERVAL if limits is not None else 5.0
    builder = TimelineBuilder(
        min(options.interval, max_interval), options.timeline_capacity, max_interval=max_interval
    )
    working_set = options.memory_limit_bytes is None
    return builder, TreeWatcher(pid, group, builder, t0, options.clock, working_set=working_set)


def _preexec(blocked: Iterable[int], groups: list[str], join_groups: Sequence[str]) -> Callable[[], None]:
    """What the child runs before exec: memgauge's signal mask undone, then into its groups (it
    starts charged to them)."""

    def preexec() -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        for path in (*groups, *join_groups):
            with open(path, "w") as f:
                f.write(str(os.getpid()))

    return preexec


def _program_ended(watcher: TreeWatcher, isolation: Isolation, reap_now: Callable[[], None]) -> None:
    """The watcher's last samples and the isolation's end, once the program's main process ended;
    signals that arrived meanwhile (a second Ctrl-C) must not hit memgauge."""
    watcher.sample()
    watcher.finish_cpu()
    isolation.program_ended(reap_now)
    watcher.close()
    while signal.sigtimedwait(WAITED, 0) is not None:
        reap_now()


def _wait_for(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _spawn(
    isolation: Isolation, target: Target, env: dict[str, str], preexec: Callable[[], None]
) -> subprocess.Popen[bytes]:
    try:
        return isolation.spawn(target.argv(), env, preexec)
    except FileNotFoundError as e:
        raise CommandNotFoundError(f"command not found: {target.value}") from e
    except PermissionError as e:
        raise CommandNotExecutableError(f"cannot execute {target.value}: {e.strerror}") from e
    except OSError as e:
        raise CommandNotExecutableError(f"cannot execute {target.value}: {e.strerror or e}") from e


def run_program(target: Target, options: RunOptions | None = None) -> Profile:
    """Run ``target`` to completion under measurement. Raises a MemgaugeError for input that cannot
    run (checked before anything starts); a program that fails is not an error here: its exit
    status is in the profile."""
    options = options or RunOptions()
    entered = time.monotonic()
    cpu_before = own_process_cpu()
    target.check()
    clock = options.clock
    group: MemoryGroup | None = None  # closed at the end, however the run ends
    isolation = options.isolation()
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, WAITED)
    outside: OutsideLines | None = None
    try:
        # first: a sandbox's mounts decide what the rest (cgroups, the events directory) sees
        limits = isolation.enter(options.enforce)
        group, group_reason = _memory_group(options)
        enforced_by_group = _limited_by_group(limits, group)
        events_dir, env = isolation.prepare(group, group_reason, enforced_by_group)
        env[ENV_EVENTS_DIR] = events_dir
        _instrument(env, options)
        line_sampler = _choose_line_sampler(options)
        outside = _outside_lines(line_sampler, env, events_dir, options, clock)
        oom_before = _global_oom_kills()
        preexec = _preexec(blocked, [group.procs_file] if group is not None else [], options.join_groups)
        # before the spawn, where the kernel's wait for the child's join to its group is still
        # under way (``make_group_ahead``): ctypes and the watcher's modules load meanwhile
        _set_subreaper(True)
        from memgauge.runner._watch import start_watches, stop_watches, watch_parts
        from memgauge.watcher import TimelineBuilder, TreeWatcher  # noqa: F401

        watching = watch_parts()

        started_at = time.time()
        spawned = time.monotonic()
        t0 = clock()
        child = _spawn(isolation, target, env, preexec)
        builder, watcher = _watcher(child.pid, group, limits, options, t0)
        state = RunState(child.pid)
        if outside is not None:
            watcher.exclude(outside.pid)
            # python: the bootstrap under this interpreter, exec'd already
            outside.start(child.pid, python=target.kind != "command")
        warming = no_wait
        try:
            watcher.sample()  # at once: a program may not live long
            # the sections' watches (NVML's thread polls the GPUs) while the program runs
            watches = start_watches(watching, child.pid)
            warming = prewarm(options.prewarm)
            watch(state, watcher, builder, limits, isolation, clock, t0)
        except BaseException:
            # the measurement broke, the program did not: let it finish as if run directly
            if outside is not None:
                outside.stop()
            if not state.main_done:
                _wait_for(child.pid)
            raise
        finally:
            # before this thread imports anything of its own (``prewarm``), and before an error
            # ends the interpreter under a thread still importing
            warming()
        wall = state.reaped[child.pid].at
        reaped = spawned + wall
        watched = stop_watches(watches)
        child.returncode = os.waitstatus_to_exitcode(state.reaped[child.pid].status)
        _program_ended(watcher, isolation, lambda: reap(state, clock() - t0))
        global_ooms = _global_oom_kills() - oom_before
        if outside is not None:
            line_sampler = outside.finish()
            _outside_cpu(state, outside)
        # loaded by prewarm's thread while the program ran (joined above): imported in the main
        # loop, it left a gap in the samples (~130 ms uncompiled, where PYTHONDONTWRITEBYTECODE is
        # set) that a short-lived child fell into
        from memgauge.runner._assemble import assemble_profile

        with isolation.reading_as_program():
            profile = assemble_profile(
                target, state, watcher, group, group_reason, events_dir, wall, global_ooms, options, watched
            )
        if options.lines != "off":
            profile.environment.setdefault("measurement", {})["line_sampler"] = line_sampler
        if limits is not None:
            record_enforcement(profile, limits, state, enforced_by_group, group_reason)
        _record_group(profile, group, options, limits, enforced_by_group)
        isolation.finish(profile)
        profile.overhead = overhead_of(
            state,
            process_start=options.process_start,
            entered=entered,
            spawned=spawned,
            reaped=reaped,
            assembled=time.monotonic(),
            cpu_before=cpu_before,
        )
        # ISO 8601 in UTC, as datetime's isoformat(timespec="seconds") writes it, without its import
        profile.started_at = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(started_at))
        return profile
    finally:
        if outside is not None:
            outside.stop()  # where the program could not start: the waiting py-spy shell goes too
        isolation.close()
        _set_subreaper(False)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        if group is not None:
            group.close()
