"""The watcher outside the measured process: samples the process tree from ``/proc``.

It runs in memgauge's own process, so the program pays nothing for it but a share of a CPU core
(about 25 µs a sample for one process). Peaks never come from these samples alone: per-process
peaks come from ``VmHWM`` (a kernel high-water mark, exact between samples) and the tree peak from
the cgroup when there is one.
"""

from __future__ import annotations

import contextlib
import os
import signal

from memgauge import capture
from memgauge.capture import BOOTSTRAP_MODULE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from memgauge.watcher._cgroup import MemoryGroup
    from memgauge.watcher._timeline import TimelineBuilder

# plain classes, no dataclasses: the runner imports this module before it starts the program, so
# that the first sample is taken at once

# without a cgroup, children forked by threads other than the main one are found by a full /proc scan
# every this many samples
_FULL_SCAN_EVERY = 10


# what memgauge keeps of one process's command line, and of all of them together, in characters: a
# program starting hundreds of children with megabyte command lines would otherwise swell
# memgauge's own memory (no limit of the run's bounds it) and the profile
MAX_CMDLINE_CHARS = 4096
MAX_CMDLINES_CHARS = 1 << 20
# what is kept of a process's command line once the total is spent
MIN_CMDLINE_CHARS = 256


def bounded_cmdline(cmdline: list[str], limit: int = MAX_CMDLINE_CHARS) -> list[str]:
    """``cmdline`` cut to at most ``limit`` characters (arguments' own), the cut said in its last
    argument."""
    out: list[str] = []
    used = 0
    for i, arg in enumerate(cmdline):
        if used + len(arg) <= limit:
            out.append(arg)
            used += len(arg)
            continue
        room = max(0, limit - used)
        cut = sum(len(a) for a in cmdline[i:]) - room
        out.append(f"{arg[:room]}...[{cut} more characters]")
        break
    return out


class CmdlineBudget:
    """The command lines a watcher keeps: each at most ``MAX_CMDLINE_CHARS``, all together about
    ``MAX_CMDLINES_CHARS`` (past it, ``MIN_CMDLINE_CHARS`` each)."""

    def __init__(self) -> None:
        self.used = 0

    def keep(self, cmdline: list[str]) -> list[str]:
        limit = max(MIN_CMDLINE_CHARS, min(MAX_CMDLINE_CHARS, MAX_CMDLINES_CHARS - self.used))
        kept = bounded_cmdline(cmdline, limit)
        self.used += sum(len(a) for a in kept)
        return kept


def user_cmdline(cmdline: list[str] | None) -> list[str] | None:
    """The command line without memgauge's bootstrap, as the user would have run it."""
    if cmdline and cmdline[1:3] == ["-m", BOOTSTRAP_MODULE] and len(cmdline) >= 5:
        kind, rest = cmdline[3], cmdline[4:]
        return [cmdline[0], *(["-m"] if kind == "module" else []), *rest]
    return cmdline


class WatchedProcess:
    """One process image as the watcher saw it (a pid that exec'd has one per program)."""

    def __init__(
        self,
        pid: int,
        ppid: int | None,
        image: tuple[int, int],
        cmdline: list[str],
        first_seen: float,
        last_seen: float,
        *,
        alive: bool = True,
        first_sample: int = 0,
    ) -> None:
        self.pid, self.ppid, self.image, self.cmdline = pid, ppid, image, cmdline
        self.first_seen, self.last_seen = first_seen, last_seen
        self.alive, self.first_sample = alive, first_sample
        self.peak = 0
        self.last_high_water, self.last_high_water_at = 0, 0.0
        self.user, self.system = 0.0, 0.0
        self.replaced_by_exec = False


class TreeWatcher:
    def __init__(
        self,
        root_pid: int,
        group: MemoryGroup | None,
        builder: TimelineBuilder,
        t0: float,
        clock: Callable[[], float],
    ) -> None:
        self.root_pid, self.group, self.builder, self.t0, self.clock = root_pid, group, builder, t0, clock
        self.processes: list[WatchedProcess] = []
        self.max_sampled_tree, self.max_sampled_tree_at = 0, 0.0
        self.group_peak_at: float | None = None
        # the latest sample, for a watchdog: tree resident (the cgroup's usage where there is one)
        # and tree CPU seconds
        self.last_resident, self.last_cpu = 0, 0.0
        self._live: dict[int, WatchedProcess] = {}
        self._known: set[int] = set()
        self._samples = 0
        self._group_peak = -1
        self._files = capture.OpenFiles()
        self._cmdlines = CmdlineBudget()

    def _discover(self) -> list[int]:
        if self.group is not None:
            return self.group.pids()
        # memgauge is a child subreaper: orphans of the tree become memgauge's own children, so the
        # tree is everything below memgauge (which has no other children)
        me = os.getpid()
        pids = {self.root_pid} | {p for p in self._known if p in self._live} | set(capture.read_children(me))
        if self._samples % _FULL_SCAN_EVERY == 0:
            ppids = capture.scan_ppids()
            children: dict[int, list[int]] = {}
            for pid, ppid in ppids.items():
                children.setdefault(ppid, []).append(pid)
            todo = [me]
            while todo:
                pid = todo.pop()
                for c in children.get(pid, []):
                    if c not in pids:
                        pids.add(c)
                        todo.append(c)
        else:
            todo = list(pids)
            while todo:
                for c in capture.read_children(todo.pop()):
                    if c not in pids:
                        pids.add(c)
                        todo.append(c)
        self._known = pids
        return sorted(pids)

    def sample(self) -> None:
        now = self.clock() - self.t0
        per_process: dict[int, int] = {}
        seen: set[int] = set()
        for pid in self._discover():
            raw = self._files.read(f"/proc/{pid}/stat")
            st = capture.parse_stat(raw) if raw else None
            if st is None:
                continue
            proc = self._live.get(pid)
            if st.image == (0, 0):
                # a zombie (or a kernel thread): no memory left to read, but its final CPU times
                if proc is not None:
                    proc.user, proc.system = st.user_seconds, st.system_seconds
                    proc.last_seen = now
                    seen.add(pid)
                continue
            status = self._files.read(f"/proc/{pid}/status")
            hwm = capture.parse_high_water(status) if status else 0
            if proc is None or proc.image != st.image:
                # new process, or the same pid after exec: a new program with its own high-water mark
                if proc is not None:
                    # CPU time survives exec, so the new record carries it. An image seen only in the
                    # last sample or two was a fork on its way to exec: its VmHWM is its parent's
                    # shared pages (the ru_maxrss trap), not a program of its own.
                    proc.alive, proc.user, proc.system = False, 0.0, 0.0
                    proc.replaced_by_exec = self._samples - proc.first_sample <= 1
                proc = WatchedProcess(
                    pid,
                    st.ppid,
                    st.image,
                    self._cmdlines.keep(user_cmdline(capture.read_cmdline(pid)) or [f"[{st.comm}]"]),
                    now,
                    now,
                    first_sample=self._samples,
                )
                self._live[pid] = proc
                self.processes.append(proc)
            proc.last_seen = now
            proc.peak = max(proc.peak, hwm)
            proc.last_high_water, proc.last_high_water_at = hwm, now
            proc.user, proc.system = st.user_seconds, st.system_seconds
            per_process[pid] = st.resident_bytes
            seen.add(pid)
        for pid in [p for p in self._live if p not in seen]:
            self._live.pop(pid).alive = False
            self._files.close_prefix(f"/proc/{pid}/")
        tree = sum(per_process.values())
        if tree > self.max_sampled_tree:
            self.max_sampled_tree, self.max_sampled_tree_at = tree, now
        usage = None
        if self.group is not None:
            usage = self.group.usage()
            peak = self.group.peak()
            if peak > self._group_peak:
                self._group_peak, self.group_peak_at = peak, now
        user = sum(p.user for p in self.processes)
        system = sum(p.system for p in self.processes)
        self.builder.add(now, tree, user, system, per_process, usage)
        self.last_resident = tree if usage is None else usage
        self.last_cpu = user + system
        self._samples += 1

    def kill_all(self) -> None:
        """SIGKILL every process of the tree that is still there."""
        pids = set(self.group.pids()) if self.group is not None else set()
        for pid in pids | set(self._live) | {self.root_pid}:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def close(self) -> None:
        self._files.close_all()
