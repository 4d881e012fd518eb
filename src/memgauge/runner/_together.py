"""Several programs at once on one emulated machine (``memgauge plan --verify``): each its own child,
all in one fresh memory cgroup limited to the machine's memory, the page cache of their files
evicted first, each started at its offset. The ground truth a plan is checked against: survived or
OOM-killed, the group's ``failcnt`` and high-water mark, and how much slower each ran.

The programs run plain (not under memgauge's bootstrap): what is verified is the programs, not
memgauge's measurement of them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

from memgauge._errors import LimitError
from memgauge.runner._fit import evict_page_cache

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["TogetherRun", "run_together"]

_POLL = 0.005


@dataclass(frozen=True)
class TogetherRun:
    """``exit_codes``: each program's (negative: the signal that killed it; None: still running at
    the cap, then killed); ``walls``: each one's wall time from its own start; ``oom_kills`` and
    ``limit_hits`` (``failcnt``) of the group; ``peak_bytes`` its high-water mark."""

    limit_bytes: int
    offsets_seconds: list[float]
    exit_codes: list[int | None]
    walls: list[float]
    oom_kills: int
    limit_hits: int
    peak_bytes: int
    wall_seconds: float
    stalled: bool

    @property
    def survived(self) -> bool:
        return self.oom_kills == 0 and not self.stalled and all(c == 0 for c in self.exit_codes)


def _argv(command: Sequence[str]) -> list[str]:
    """A profile's command as the user typed it: its ``python`` is the interpreter memgauge runs in
    (the one the profile measured it with)."""
    argv = list(command)
    if argv and argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    return argv


def run_together(
    commands: Sequence[Sequence[str]],
    offsets: Sequence[float],
    limit_bytes: int,
    *,
    roots: Sequence[str] = (),
    wall_cap: float | None = None,
) -> TogetherRun:
    """Run ``commands`` together, the i-th started ``offsets[i]`` seconds after the first, in one
    fresh memory group under ``limit_bytes``, with the files under ``roots`` evicted from page cache
    first. ``wall_cap``: seconds after which what still runs is killed (then ``stalled``)."""
    from memgauge.watcher import create_memory_group

    if len(commands) != len(offsets):
        raise ValueError("one offset per command")
    evict_page_cache(roots)
    group, reason = create_memory_group()
    if group is None:
        raise LimitError(f"no memory cgroup for the verifying run: {reason}")
    procs: list[subprocess.Popen[bytes] | None] = [None] * len(commands)
    started = [0.0] * len(commands)
    ended: list[float | None] = [None] * len(commands)
    stalled = False
    try:
        group.set_limit(limit_bytes)
        procs_file = group.procs_file

        def enter_group() -> None:  # in the child, before exec: it starts charged to the group
            with open(procs_file, "w") as f:
                f.write(str(os.getpid()))

        order = sorted(range(len(commands)), key=lambda i: offsets[i])
        t0 = time.monotonic()
        pending = list(order)
        while True:
            now = time.monotonic()
            while pending and now - t0 >= offsets[pending[0]]:
                i = pending.pop(0)
                started[i] = time.monotonic()
                procs[i] = subprocess.Popen(
                    _argv(commands[i]),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    preexec_fn=enter_group,  # noqa: PLW1509 (memgauge starts no threads before)
                )
            _note_ended(procs, ended)
            if not pending and all(e is not None for e in ended):
                break
            if wall_cap is not None and now - t0 > wall_cap:
                stalled = True
                break
            time.sleep(_POLL)
        wall = time.monotonic() - t0
        _kill_running(procs)
        return TogetherRun(
            limit_bytes=limit_bytes,
            offsets_seconds=list(offsets),
            exit_codes=[
                None if p is None or e is None else p.returncode for p, e in zip(procs, ended, strict=True)
            ],
            walls=[(e - s) if e is not None else wall for s, e in zip(started, ended, strict=True)],
            oom_kills=group.oom_kills(),
            limit_hits=group.limit_hits(),
            peak_bytes=group.peak(),
            wall_seconds=wall,
            stalled=stalled,
        )
    finally:
        _kill_running(procs)
        group.close()


def _note_ended(procs: Sequence[subprocess.Popen[bytes] | None], ended: list[float | None]) -> None:
    for i, p in enumerate(procs):
        if p is not None and ended[i] is None and p.poll() is not None:
            ended[i] = time.monotonic()


def _kill_running(procs: Sequence[subprocess.Popen[bytes] | None]) -> None:
    """What still runs of ``procs`` killed (SIGKILL) and waited for."""
    for p in procs:
        if p is not None and p.poll() is None:
            with contextlib.suppress(OSError):
                p.send_signal(signal.SIGKILL)
            p.wait()
