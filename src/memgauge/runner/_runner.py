"""Run a program in a child process under measurement and return its :class:`Profile`.

The child inherits stdin, stdout, stderr, the working directory and the environment, and runs in
memgauge's process group, so a terminal's Ctrl-C reaches it directly. Signals sent to memgauge
itself (``kill``) are forwarded; signals the kernel sends to the whole foreground group are not
forwarded again. The main thread blocks those signals and waits for them with ``sigtimedwait``
between samples, so there is no signal-handler race and no sampler thread.

memgauge is made a child subreaper, so orphaned grandchildren stay in the tree it watches.
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime as _dt
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memgauge._errors import (
    CommandNotExecutableError,
    CommandNotFoundError,
    LimitError,
    TargetNotFoundError,
)
from memgauge._profile import CpuTimes, ExitStatus, Peak, PhaseRecord, ProcessRecord, Profile
from memgauge._units import format_bytes
from memgauge._version import __version__
from memgauge.capture._assemble import order_phases
from memgauge.capture._cgroup import MemoryGroup, create_memory_group
from memgauge.capture._child import BOOTSTRAP_FAILED
from memgauge.capture._environment import machine_environment
from memgauge.capture._events import ENV_EVENTS_DIR, read_events
from memgauge.capture._timeline import TimelineBuilder
from memgauge.capture._watcher import TreeWatcher, WatchedProcess, user_cmdline
from memgauge.runner._target import Target

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


@dataclass
class RunOptions:
    interval: float = 0.01
    cgroup: str = "auto"  # auto | v2 | v1 | off
    timeline_capacity: int = 2048
    # enforced through the cgroup; LimitError when no cgroup can be made
    memory_limit_bytes: int | None = None
    env: dict[str, str] | None = None
    cwd: str | None = None
    clock: Callable[[], float] = time.monotonic


@dataclass
class _Reaped:
    status: int
    user: float
    system: float
    at: float


@dataclass
class _RunState:
    main_pid: int
    reaped: dict[int, _Reaped] = field(default_factory=dict)

    @property
    def main_done(self) -> bool:
        return self.main_pid in self.reaped


def _set_subreaper() -> None:
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _global_oom_kills() -> int:
    try:
        with open("/proc/vmstat") as f:
            for line in f:
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _reap(state: _RunState, now: float) -> None:
    while True:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        state.reaped[pid] = _Reaped(status, usage.ru_utime, usage.ru_stime, now)


def _shares_our_group(pid: int) -> bool:
    try:
        return os.getpgid(pid) == os.getpgrp()
    except ProcessLookupError:
        return False


def _handle(info: Any, state: _RunState, now: float) -> None:
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
    target.check()
    clock = options.clock
    group: MemoryGroup | None = None
    group_reason = "disabled with --cgroup off"
    if options.cgroup != "off":
        group, group_reason = create_memory_group(options.cgroup)
    if options.memory_limit_bytes is not None:
        if group is None:
            raise LimitError(f"cannot enforce a memory limit without a cgroup: {group_reason}")
        try:
            group.set_limit(options.memory_limit_bytes)
        except OSError as e:
            group.close()
            raise LimitError(f"cannot set the cgroup memory limit: {e.strerror}") from e
    events_dir = tempfile.mkdtemp(prefix="memgauge-events-")
    env = dict(os.environ if options.env is None else options.env)
    env[ENV_EVENTS_DIR] = events_dir
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _WAITED)
    _set_subreaper()
    oom_before = _global_oom_kills()

    def preexec() -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        if group is not None:
            with open(group.procs_file, "w") as f:
                f.write(str(os.getpid()))

    started_at = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    try:
        t0 = clock()
        try:
            # preexec_fn is safe here: memgauge has started no thread yet
            argv = target.argv()
            child = subprocess.Popen(argv, env=env, cwd=options.cwd, preexec_fn=preexec)  # noqa: PLW1509
        except FileNotFoundError as e:
            raise CommandNotFoundError(f"command not found: {target.value}") from e
        except PermissionError as e:
            raise CommandNotExecutableError(f"cannot execute {target.value}: {e.strerror}") from e
        except (OSError, subprocess.SubprocessError) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            raise CommandNotExecutableError(f"cannot execute {target.value}: {reason}") from e
        builder = TimelineBuilder(options.interval, options.timeline_capacity)
        watcher = TreeWatcher(child.pid, group, builder, t0, clock)
        state = _RunState(child.pid)
        next_sample = clock()
        try:
            while not state.main_done:
                watcher.sample()
                next_sample += builder.interval
                wait = next_sample - clock()
                if wait < 0:
                    next_sample, wait = clock(), 0.0
                info = signal.sigtimedwait(_WAITED, wait)
                while info is not None:
                    _handle(info, state, clock() - t0)
                    info = signal.sigtimedwait(_WAITED, 0)
        except BaseException:
            # the measurement broke, the program did not: let it finish as if run directly
            if not state.main_done:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(child.pid, 0)
            raise
        wall = state.reaped[child.pid].at
        child.returncode = os.waitstatus_to_exitcode(state.reaped[child.pid].status)
        watcher.sample()
        # signals that arrived as the child ended (a second Ctrl-C) must not hit memgauge
        while signal.sigtimedwait(_WAITED, 0) is not None:
            _reap(state, clock() - t0)
        profile = _assemble(
            target,
            state,
            watcher,
            group,
            group_reason,
            events_dir,
            wall,
            _global_oom_kills() - oom_before,
            options.interval,
            options.memory_limit_bytes,
        )
        profile.started_at = started_at
        return profile
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        if group is not None:
            group.close()
        shutil.rmtree(events_dir, ignore_errors=True)


def _exit_status(status: int, oom: bool) -> ExitStatus:
    code = os.waitstatus_to_exitcode(status)
    if code >= 0:
        return ExitStatus(code=code)
    sig = -code
    try:
        name = signal.Signals(sig).name
    except ValueError:
        name = f"signal {sig}"
    return ExitStatus(code=None, signal=sig, signal_name=name, oom_killed=oom and sig == signal.SIGKILL)


def _assemble(
    target: Target,
    state: _RunState,
    watcher: TreeWatcher,
    group: MemoryGroup | None,
    group_reason: str,
    events_dir: str,
    wall: float,
    global_ooms: int,
    interval: float,
    memory_limit: int | None,
) -> Profile:
    t0 = watcher.t0
    events = read_events(events_dir)
    main_status = state.reaped[state.main_pid].status
    bootstrap_failed = os.WIFEXITED(main_status) and os.WEXITSTATUS(main_status) == BOOTSTRAP_FAILED
    for ev in events:
        if bootstrap_failed and ev["ev"] == "error" and ev.get("kind") == "module_not_found":
            raise TargetNotFoundError(str(ev.get("message", f"no module named {target.value}")))

    # per-process records: the watcher's, completed by what the processes reported themselves
    by_pid: dict[int, WatchedProcess] = {}
    for proc in watcher.processes:
        by_pid[proc.pid] = proc  # the latest image of a pid is the one that emits events
    exact: set[int] = set()
    program_env: dict[str, Any] = {}
    for ev in events:
        pid = int(ev["pid"])
        found = by_pid.get(pid)
        if found is None:
            # lived between two samples: known only from its own events
            t = float(ev["t"]) - t0
            proc = WatchedProcess(pid, None, (0, 0), [], "", t, t, alive=False)
            by_pid[pid] = proc
            watcher.processes.append(proc)
        else:
            proc = found
        if ev["ev"] in ("phase_start", "hwm_reset"):
            proc.peak = max(proc.peak, int(ev["hwm_before"]))
        elif ev["ev"] == "phase_end":
            proc.peak = max(proc.peak, int(ev["peak"]))
        elif ev["ev"] == "exit":
            proc.peak = max(proc.peak, int(ev["hwm"]))
            proc.last_seen = max(proc.last_seen, float(ev["t"]) - t0)
            exact.add(pid)
            proc.cmdline = proc.cmdline or user_cmdline(list(ev.get("cmdline") or [])) or []
            if pid == state.main_pid or not program_env:
                program_env = dict(ev.get("env") or {})

    processes = [
        ProcessRecord(
            pid=p.pid,
            ppid=p.ppid,
            cmdline=p.cmdline,
            start_seconds=p.first_seen,
            end_seconds=state.reaped[p.pid].at if (p.pid in state.reaped and not p.alive) else p.last_seen,
            peak_resident_bytes=p.peak,
            cpu_user_seconds=p.user,
            cpu_system_seconds=p.system,
            peak_exact=p.pid in exact and by_pid.get(p.pid) is p,
        )
        for p in watcher.processes
        if not p.replaced_by_exec
    ]
    processes.sort(key=lambda r: (r.start_seconds, r.pid))

    phases = _phases_from_events(events, t0, by_pid, wall)
    oom = (group.oom_kills() if group is not None else global_ooms) > 0
    peak = _tree_peak(watcher, group, processes)
    if oom:
        peak.notes.append("the kernel's OOM killer killed a process during the run")
    user = sum(r.user for r in state.reaped.values())
    system = sum(r.system for r in state.reaped.values())
    environment: dict[str, Any] = {**machine_environment(), **program_env, "mode": "child-process"}
    environment["measurement"] = {
        "tree_peak_method": peak.method,
        "cgroup": str(group.path) if group is not None else None,
        "cgroup_unavailable_reason": None if group is not None else group_reason,
        "sampling_interval_start_seconds": interval,
        "memory_limit_bytes": memory_limit,
    }
    return Profile(
        command=target.display(),
        exit=_exit_status(state.reaped[state.main_pid].status, oom),
        wall_seconds=wall,
        cpu=CpuTimes(user, system),
        peak=peak,
        processes=processes,
        phases=phases,
        timeline=watcher.builder.build(),
        environment=environment,
        memgauge_version=__version__,
    )


def _tree_peak(watcher: TreeWatcher, group: MemoryGroup | None, processes: list[ProcessRecord]) -> Peak:
    largest = max((p.peak_resident_bytes for p in processes), default=0)
    sampled = watcher.max_sampled_tree
    if group is not None:
        peak = Peak(
            resident_bytes=group.peak(),
            method=group.method,
            error_bound_bytes=group.error_bound_bytes,
            at_seconds=watcher.group_peak_at,
            includes_page_cache=True,
            largest_process_bytes=largest,
            sampled_tree_bytes=sampled,
        )
        if largest > 1.1 * (peak.resident_bytes + peak.error_bound_bytes):
            peak.notes.append(
                f"the largest process's own peak ({format_bytes(largest)}) is above the group's: file pages "
                "(libraries, mapped files) already cached count in a process's RSS but are charged to the "
                "cgroup that first read them"
            )
        return peak
    best = max(sampled, largest)
    upper = sum(p.peak_resident_bytes for p in processes)
    return Peak(
        resident_bytes=best,
        method="sampled tree sum + per-process VmHWM",
        error_bound_bytes=max(0, upper - best),
        at_seconds=watcher.max_sampled_tree_at,
        includes_page_cache=False,
        largest_process_bytes=largest,
        sampled_tree_bytes=sampled,
        notes=[
            "no cgroup: the tree peak lies between the largest sampled sum and the sum of per-process peaks; "
            "processes that lived less than one sampling interval may be missed"
        ],
    )


def _phases_from_events(
    events: list[dict[str, Any]], t0: float, by_pid: dict[int, WatchedProcess], wall: float
) -> list[PhaseRecord]:
    entries: list[tuple[Any, Any, PhaseRecord]] = []
    open_: dict[tuple[int, int], dict[str, Any]] = {}
    for ev in events:
        key = (int(ev["pid"]), int(ev.get("id", -1)))
        if ev["ev"] == "phase_start":
            open_[key] = ev
        elif ev["ev"] == "phase_end" and key in open_:
            start = open_.pop(key)
            entries.append(_phase_entry(start, ev, t0))
    for key, start in open_.items():
        # the process ended (or was killed) inside the phase: keep what is known
        proc = by_pid.get(key[0])
        end_t = proc.last_seen if proc is not None else wall
        start_t = float(start["t"]) - t0
        lower = int(start["rss"])
        if proc is not None and proc.last_high_water_at >= start_t:
            lower = max(lower, proc.last_high_water)
        record = PhaseRecord(
            name=str(start["name"]),
            pid=key[0],
            start_seconds=start_t,
            end_seconds=max(end_t, start_t),
            peak_resident_bytes=lower,
            start_resident_bytes=int(start["rss"]),
            end_resident_bytes=0,
            depth=int(start["depth"]),
            thread=str(start.get("thread", "")),
            peak_exact=False,
            complete=False,
        )
        parent = start.get("parent")
        entries.append((key, (key[0], parent) if parent is not None else None, record))
    return order_phases(entries)


def _phase_entry(start: dict[str, Any], end: dict[str, Any], t0: float) -> tuple[Any, Any, PhaseRecord]:
    pid = int(start["pid"])
    record = PhaseRecord(
        name=str(start["name"]),
        pid=pid,
        start_seconds=float(start["t"]) - t0,
        end_seconds=float(end["t"]) - t0,
        peak_resident_bytes=int(end["peak"]),
        start_resident_bytes=int(start["rss"]),
        end_resident_bytes=int(end["rss"]),
        depth=int(start["depth"]),
        thread=str(start.get("thread", "")),
        peak_exact=bool(end.get("exact", True)),
    )
    parent = start.get("parent")
    return (pid, int(start["id"])), ((pid, parent) if parent is not None else None), record
