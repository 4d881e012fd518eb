"""The runner's main thread between two samples of the program: waiting for signals (``SIGCHLD``
and those it forwards, all blocked and taken with ``sigtimedwait``: no handler races), reaping the
processes that ended, forwarding what was sent to memgauge, and stopping the tree at an enforced
limit."""

from __future__ import annotations

import contextlib
import os
import signal

from memgauge.runner._state import Reaped, RunState

TYPE_CHECKING = False  # not typing's: loaded before the program starts (docs/benchmarks.md)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from memgauge.isolation import HardLimits, Isolation
    from memgauge.watcher import TimelineBuilder, TreeWatcher

FORWARDED = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)
WAITED = {signal.SIGCHLD, *FORWARDED}


def watch(
    state: RunState,
    watcher: TreeWatcher,
    builder: TimelineBuilder,
    limits: HardLimits | None,
    isolation: Isolation,
    clock: Callable[[], float],
    t0: float,
) -> None:
    """Sample the tree every ``builder.interval`` until the program's main process is reaped,
    killing the tree where an enforced limit is crossed (the watchdog)."""
    next_sample = clock()
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
        info = signal.sigtimedwait(WAITED, wait)
        if info is None and _child_exited():
            # a SIGCHLD this thread did not get: run_program used as a library in a process with
            # other threads (which the kernel may hand the signal to)
            watcher.sample()
            reap(state, clock() - t0)
        while info is not None:
            if info.si_signo == signal.SIGCHLD:
                # before reaping: a zombie's /proc/PID/stat still holds its final CPU times
                watcher.sample()
            _handle(info, state, clock() - t0)
            info = signal.sigtimedwait(WAITED, 0)


def reap(state: RunState, now: float) -> None:
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
        reap(state, now)
    elif not state.main_done and (info.si_code <= 0 or not _shares_our_group(state.main_pid)):
        # forwarded when sent by a process (kill, sigqueue) rather than by the terminal to the
        # whole foreground group, unless the program left that group (setsid, setpgid)
        with contextlib.suppress(ProcessLookupError):
            os.kill(state.main_pid, info.si_signo)
