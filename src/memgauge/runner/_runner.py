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
from typing import TYPE_CHECKING, Any

from memgauge._env import ENV_ALLOC, ENV_EVENTS_DIR, ENV_LINE_SAMPLER, ENV_LINES, ENV_LINES_OUTSIDE, ENV_TORCH
from memgauge._errors import CommandNotExecutableError, CommandNotFoundError, LimitError
from memgauge.capture import AUTOSTART_DIR
from memgauge.isolation import HardLimits, NoIsolation
from memgauge.runner._overhead import overhead_of, own_process_cpu, prewarm
from memgauge.runner._run_records import record_enforcement, record_group_counters
from memgauge.runner._state import Reaped, RunState
from memgauge.runner._target import Target
from memgauge.watcher import create_memory_group

if TYPE_CHECKING:
    from collections.abc import Callable

    from memgauge.isolation import Isolation, SandboxRun
    from memgauge.model import Profile
    from memgauge.watcher import MemoryGroup

# Only what starting the program needs is imported above: the modules that sample, assemble and
# describe the run (dataclasses, json, ...) are imported once the program runs, on the other core,
# instead of delaying its start.

_FORWARDED = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)
_WAITED = {signal.SIGCHLD, *_FORWARDED}
_PR_SET_CHILD_SUBREAPER = 36


class RunOptions:
    """How to run: ``interval`` first sampling interval (s); ``cgroup`` auto | v2 | v1 | off;
    ``memory_limit_bytes`` enforced through the cgroup (LimitError when none can be made);
    ``lines`` on | lib | off: line sampling in the program's Python processes, ``lib`` keeping
    library frames instead of folding them into the user's; ``alloc``: allocation tracking (memray);
    ``enforce``: hard limits the program is stopped at; ``sandbox``: run the program sandboxed
    (``memgauge.isolation``: namespaces, mounts, an unprivileged uid, process and output limits, a
    scrubbed environment, which ``env`` and ``cwd`` give way to), as ``sweep.execute_job`` plans it;
    ``join_groups``: ``cgroup.procs`` files of groups the caller made (a CPU quota that emulates a
    smaller machine) that the child enters before it starts, with its memory group;
    ``line_sampler``: auto | outside | inside: the lines read from outside the program by py-spy
    (no GIL needed: a long C call is seen running) where ptrace rights allow, or by a thread inside
    each process (``inside``, the default, and ``auto`` where py-spy may not read it or a sandbox
    runs it); ``MEMGAUGE_LINE_SAMPLER`` sets it.
    """

    def __init__(
        self,
        *,
        interval: float = 0.01,
        cgroup: str = "auto",
        timeline_capacity: int = 2048,
        memory_limit_bytes: int | None = None,
        lines: str = "on",
        alloc: bool = False,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        enforce: HardLimits | None = None,
        sandbox: SandboxRun | None = None,
        join_groups: tuple[str, ...] = (),
    ) -> None:
        self.interval = interval
        self.cgroup = cgroup
        self.timeline_capacity = timeline_capacity
        self.memory_limit_bytes = memory_limit_bytes
        self.lines = lines
        self.alloc = alloc
        self.env = env
        self.cwd = cwd
        self.clock = clock
        self.enforce = enforce
        self.sandbox = sandbox
        # the cgroup.procs files of groups the caller made (a CPU quota) the child enters too
        self.join_groups = join_groups
        # "" (the default: inside, until the outside sampler's cost and per-line share hold on every
        # workload, docs/measurement.md) | auto | outside | inside
        self.line_sampler = os.environ.get(ENV_LINE_SAMPLER, "")
        # off | summary | full: the torch tracker, started when the program imports torch
        self.torch = "summary"
        # when memgauge's process started (monotonic; ``process_started``): its start-up is then
        # this run's, timed in the profile; None for a run made by a longer-lived process
        self.process_start: float | None = None

    def isolation(self) -> Isolation:
        """What stands between the program and the host: the sandbox the plan describes, else
        nothing (the program runs in ``env`` and ``cwd``, or memgauge's own)."""
        if self.sandbox is None:
            return NoIsolation(self.env, self.cwd)
        from memgauge.isolation import SandboxIsolation

        return SandboxIsolation(self.sandbox)


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


def _reap(state: RunState, now: float) -> None:
    while True:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        state.reaped[pid] = Reaped(status, usage.ru_utime, usage.ru_stime, now)


def _child_exited() -> bool:
    """Whether a child waits to be reaped (without reaping it)."""
    try:
        return os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return False


def _shares_our_group(pid: int) -> bool:
    try:
        return os.getpgid(pid) == os.getpgrp()
    except ProcessLookupError:
        return False


def _handle(info: Any, state: RunState, now: float) -> None:
    if info.si_signo == signal.SIGCHLD:
        _reap(state, now)
    elif not state.main_done and (info.si_code <= 0 or not _shares_our_group(state.main_pid)):
        # forwarded when sent by a process (kill, sigqueue) rather than by the terminal to the
        # whole foreground group, unless the program left that group (setsid, setpgid)
        with contextlib.suppress(ProcessLookupError):
            os.kill(state.main_pid, info.si_signo)


def run_program(target: Target, options: RunOptions | None = None) -> Profile:
    """Run ``target`` to completion under measurement. Raises a MemgaugeError for input that cannot
    run (checked before anything starts); a program that fails is not an error here: its exit
    status is in the profile."""
    options = options or RunOptions()
    entered = time.monotonic()
    cpu_before = own_process_cpu()
    target.check()
    clock = options.clock
    group: MemoryGroup | None = None
    group_reason = "disabled with --cgroup off"
    isolation = options.isolation()
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _WAITED)
    try:
        # first: a sandbox's mounts decide what the rest (cgroups, the events directory) sees
        limits = isolation.enter(options.enforce)
        if options.cgroup != "off":
            group, group_reason = create_memory_group(options.cgroup)
        if options.memory_limit_bytes is not None:
            if group is None:
                raise LimitError(f"cannot enforce a memory limit without a cgroup: {group_reason}")
            try:
                group.set_limit(options.memory_limit_bytes)
            except OSError as e:
                raise LimitError(f"cannot set the cgroup memory limit: {e.strerror}") from e
        enforced_by_group = False
        if limits is not None and limits.memory_bytes is not None and group is not None:
            try:
                group.set_limit(limits.memory_bytes)
                enforced_by_group = True
            except OSError:
                pass  # the watchdog alone guards the limit; the profile says which did
        events_dir, env = isolation.prepare(group, group_reason, enforced_by_group)
        env[ENV_EVENTS_DIR] = events_dir
        _instrument(env, options)
        line_sampler = _choose_line_sampler(options)
        if line_sampler is None:
            env[ENV_LINES_OUTSIDE] = str(os.getpid())
            # imported now, not between the watcher's first samples (a gap in the timeline)
            from memgauge.watcher import OutsideLines
        oom_before = _global_oom_kills()
        procs_file = group.procs_file if group is not None else None

        def preexec() -> None:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            for path in (procs_file, *options.join_groups):
                if path is not None:
                    with open(path, "w") as f:
                        f.write(str(os.getpid()))

        started_at = time.time()
        spawned = time.monotonic()
        t0 = clock()
        try:
            child = isolation.spawn(target.argv(), env, preexec)
        except FileNotFoundError as e:
            raise CommandNotFoundError(f"command not found: {target.value}") from e
        except PermissionError as e:
            raise CommandNotExecutableError(f"cannot execute {target.value}: {e.strerror}") from e
        except OSError as e:
            raise CommandNotExecutableError(f"cannot execute {target.value}: {e.strerror or e}") from e
        _set_subreaper(True)
        # the watcher's modules load while the program starts, on the other core
        from memgauge.watcher import TimelineBuilder, TreeWatcher, start_nvml_sampler

        max_interval = HardLimits.WATCHDOG_INTERVAL if limits is not None else 5.0
        builder = TimelineBuilder(
            min(options.interval, max_interval), options.timeline_capacity, max_interval=max_interval
        )
        # under a memory limit the accessed bits are left alone: clearing them steers reclaim
        working_set = options.memory_limit_bytes is None
        watcher = TreeWatcher(child.pid, group, builder, t0, clock, working_set=working_set)
        state = RunState(child.pid)
        outside = None
        if line_sampler is None:
            python = target.kind != "command"  # the bootstrap under this interpreter, exec'd already
            outside = OutsideLines(
                events_dir, child.pid, lib=options.lines == "lib", clock=clock, python=python
            )
        next_sample = clock()
        try:
            watcher.sample()  # at once: a program may not live long
            nvml = start_nvml_sampler(child.pid)  # NVML's thread polls the GPUs while the program runs
            prewarm()
            while not state.main_done:
                watcher.sample()
                if limits is not None and state.stopped_by is None:
                    reason = limits.crossed(watcher.last_resident, clock() - t0, watcher.last_cpu)
                    reason = reason or isolation.crossed()
                    if reason is not None:
                        state.stopped_by = reason + " (watchdog)"
                        watcher.kill_all()
                next_sample += builder.interval
                wait = next_sample - clock()
                if wait < 0:
                    next_sample, wait = clock(), 0.0
                info = signal.sigtimedwait(_WAITED, wait)
                if info is None and _child_exited():
                    # a SIGCHLD this thread did not get: run_program used as a library in a
                    # process with other threads (which the kernel may hand the signal to)
                    watcher.sample()
                    _reap(state, clock() - t0)
                while info is not None:
                    if info.si_signo == signal.SIGCHLD:
                        # before reaping: a zombie's /proc/PID/stat still holds its final CPU times
                        watcher.sample()
                    _handle(info, state, clock() - t0)
                    info = signal.sigtimedwait(_WAITED, 0)
        except BaseException:
            # the measurement broke, the program did not: let it finish as if run directly
            if outside is not None:
                outside.stop()
            if not state.main_done:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(child.pid, 0)
            raise
        wall = state.reaped[child.pid].at
        reaped = spawned + wall
        gpu_seen = (None, nvml) if isinstance(nvml, str) else (nvml.stop(), "")
        child.returncode = os.waitstatus_to_exitcode(state.reaped[child.pid].status)
        watcher.sample()
        watcher.finish_cpu()
        isolation.program_ended(lambda: _reap(state, clock() - t0))
        watcher.close()
        # signals that arrived as the child ended (a second Ctrl-C) must not hit memgauge
        while signal.sigtimedwait(_WAITED, 0) is not None:
            _reap(state, clock() - t0)
        global_ooms = _global_oom_kills() - oom_before
        if outside is not None:
            line_sampler = outside.finish()
            if outside.pid is not None:
                state.reaped.pop(outside.pid, None)  # py-spy's CPU time is not the program's
        # loaded by prewarm's thread while the program ran (this waits for it where it has not
        # finished): imported in the main loop, it left a gap in the samples (~130 ms uncompiled,
        # where PYTHONDONTWRITEBYTECODE is set) that a short-lived child fell into
        from memgauge.runner._assemble import assemble_profile

        with isolation.reading_as_program():
            profile = assemble_profile(
                target, state, watcher, group, group_reason, events_dir, wall, global_ooms, options, gpu_seen
            )
        if options.lines != "off":
            profile.environment.setdefault("measurement", {})["line_sampler"] = line_sampler
        if limits is not None:
            record_enforcement(profile, limits, state, enforced_by_group, group_reason)
        if group is not None:
            limit = options.memory_limit_bytes
            if enforced_by_group and limits is not None and limits.memory_bytes is not None:
                limit = limits.memory_bytes if limit is None else min(limit, limits.memory_bytes)
            record_group_counters(profile, group, limit)
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
        isolation.close()
        _set_subreaper(False)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        if group is not None:
            group.close()
