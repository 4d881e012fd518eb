"""The watcher outside the measured process: samples the process tree from ``/proc``.

It runs in memgauge's own process, so the program pays nothing for it but a share of a CPU core:
a sample of one process takes ~25 µs in a hot loop and ~300 µs every 10 ms as it runs, cold (about
5% of a core with the working set's reads; docs/benchmarks.md). Peaks never come from these
samples alone: per-process peaks come from ``VmHWM`` (a kernel high-water mark, exact between
samples) and the tree peak from the cgroup when there is one.
"""

from __future__ import annotations

import contextlib
import os
import signal

from memgauge import capture
from memgauge.watcher._cmdline import CmdlineBudget, user_cmdline
from memgauge.watcher._cpu import CpuSampler
from memgauge.watcher._working_set import FileWorkingSet

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from memgauge.watcher._cgroup import MemoryGroup
    from memgauge.watcher._timeline import TimelineBuilder

# plain classes, no dataclasses: the runner imports this module before it starts the program, so
# that the first sample is taken at once

# the tree's processes are listed in full (the group's list, else a scan of /proc) every this many
# samples; between, from the children of the processes known, which misses only those forked by
# threads other than a process's main one until the next full listing
_FULL_SCAN_EVERY = 10


# a process's share of what the tree needs is read from /proc/PID/smaps_rollup (PSS: pages shared
# copy-on-write after a fork counted once) only when the tree has several processes, and then at
# most this share of the watcher's time: a read costs about 5 ms per 300 MiB mapped
_PSS_SHARE = 0.1


def parse_rss_parts(raw: bytes) -> tuple[int, int, int]:
    """``RssAnon``, ``RssFile`` and ``RssShmem`` of a ``/proc/PID/status`` text, in bytes (0 where
    absent)."""
    out = []
    for key in (b"RssAnon:", b"RssFile:", b"RssShmem:"):
        i = raw.find(key)
        out.append(int(raw[i + len(key) : raw.index(b"kB", i)]) * 1024 if i >= 0 else 0)
    return out[0], out[1], out[2]


def parse_pss_parts(raw: bytes) -> tuple[int, int]:
    """``Pss_Anon`` and ``Pss_Shmem`` of a ``/proc/PID/smaps_rollup`` text, in bytes (0 where
    absent)."""
    out = []
    for key in (b"Pss_Anon:", b"Pss_Shmem:"):
        i = raw.find(key)
        out.append(int(raw[i + len(key) : raw.index(b"kB", i)]) * 1024 if i >= 0 else 0)
    return out[0], out[1]


def group_page_cache(group: MemoryGroup) -> int | None:
    """The page cache charged to ``group`` now (memory.stat ``file`` on v2, ``total_cache`` or
    ``cache`` on v1), None when it cannot be read."""
    try:
        with open(os.path.join(group.path, "memory.stat"), "rb") as f:
            text = f.read()
    except OSError:
        return None
    values: dict[bytes, int] = {}
    for line in text.splitlines():
        key, _, value = line.partition(b" ")
        if value.strip().isdigit():
            values[key] = int(value)
    for key in (b"file", b"total_cache", b"cache"):
        if key in values:
            return values[key]
    return None


class TreeNeeds:
    """What the tree needed at its largest sample: the sum over its processes of anonymous and
    shmem pages (their proportional shares when several processes share them copy-on-write) plus
    the largest process's file-backed pages (libraries and mapped files, shared across the tree,
    counted once). With one process it is that process's RSS."""

    __slots__ = ("anon", "at", "file", "shmem", "total")

    def __init__(self) -> None:
        self.total, self.anon, self.file, self.shmem, self.at = 0, 0, 0, 0, 0.0

    def offer(self, anon: int, file: int, shmem: int, at: float) -> None:
        if anon + file + shmem > self.total:
            self.total, self.anon, self.file, self.shmem, self.at = anon + file + shmem, anon, file, shmem, at


# (start_code, start_stack) of /proc/PID/stat as a reader without ptrace rights over PID sees them
_HIDDEN_IMAGE = (1, 0)


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


def _add_below(pids: set[int], roots: list[int], children: Callable[[int], list[int]]) -> None:
    """Every process below ``roots`` (``children`` of each) added to ``pids``."""
    todo = list(roots)
    while todo:
        for c in children(todo.pop()):
            if c not in pids:
                pids.add(c)
                todo.append(c)


class TreeWatcher:
    def __init__(
        self,
        root_pid: int,
        group: MemoryGroup | None,
        builder: TimelineBuilder,
        t0: float,
        clock: Callable[[], float],
        *,
        working_set: bool = True,
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
        self.needs = TreeNeeds()
        # the file pages counted in the need: those referenced per window (FileWorkingSet), or
        # (off: under a memory limit, where clearing accessed bits would steer the kernel's
        # reclaim) every mapped one
        self.working_set = FileWorkingSet() if working_set else None
        self._pss_after = 0.0
        # CPU utilisation per core and per process over time, at its own modest rate
        self.cpu = CpuSampler()
        # pid -> CPU seconds at its last read, for the processes ended since the last CPU interval
        self._ended_cpu: dict[int, float] = {}
        self._own: set[int] = set()  # memgauge's own children, never the program's

    def _discover(self) -> list[int]:
        full = self._samples % _FULL_SCAN_EVERY == 0
        if self.group is not None and full:
            self._known = set(self.group.pids())
            return sorted(self._known)
        me = os.getpid()
        pids = {self.root_pid} | {p for p in self._known if p in self._live}
        if self.group is None:
            # memgauge is a child subreaper: orphans of the tree become memgauge's own children, so
            # the tree is everything below memgauge (which has no other children)
            pids.update(self._children(me))
        if full:
            children: dict[int, list[int]] = {}
            for pid, ppid in capture.scan_ppids().items():
                children.setdefault(ppid, []).append(pid)
            _add_below(pids, [me], lambda pid: children.get(pid, []))
        else:
            # the children of the processes known (of their main threads), from files kept open: a
            # group's list, opened afresh, cost ~180 us a sample where the watcher runs cold, the
            # most of a sample of one process
            _add_below(pids, list(pids), self._children)
        pids -= self._own
        self._known = pids
        return sorted(pids)

    def exclude(self, pid: int | None) -> None:
        """A child of memgauge's that is not the program's (the outside sampler's py-spy): where no
        cgroup holds the tree, memgauge's children are the tree."""
        if pid is not None:
            self._own.add(pid)

    def _new_program(
        self, pid: int, st: capture.StatSample, old: WatchedProcess | None, now: float
    ) -> WatchedProcess:
        """The record of a new process, or of the same pid after exec: a new program with its own
        high-water mark."""
        if old is not None:
            # CPU time survives exec, so the new record carries it. An image seen only in the last
            # sample or two was a fork on its way to exec: its VmHWM is its parent's shared pages
            # (the ru_maxrss trap), not a program of its own.
            old.alive, old.user, old.system = False, 0.0, 0.0
            old.replaced_by_exec = self._samples - old.first_sample <= 1
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
        return proc

    def _children(self, pid: int) -> list[int]:
        """Children forked by the main thread of ``pid`` (``CONFIG_PROC_CHILDREN``)."""
        raw = self._files.read(f"/proc/{pid}/task/{pid}/children")
        try:
            return [int(x) for x in raw.split()] if raw else []
        except ValueError:
            return []

    def sample(self) -> None:
        now = self.clock() - self.t0
        per_process: dict[int, int] = {}
        parts: dict[int, tuple[int, int, int]] = {}
        hwms: dict[int, int] = {}
        seen: set[int] = set()
        for pid in self._discover():
            raw = self._files.read(f"/proc/{pid}/stat")
            st = capture.parse_stat(raw) if raw else None
            if st is None:
                continue
            proc = self._live.get(pid)
            # a process memgauge has no ptrace rights over (not dumpable: setuid programs, some
            # sandboxes) shows the kernel's placeholders for its code and stack addresses
            # (start_code 1, start_stack 0); its resident size and VmHWM do not hide
            hidden = st.image == _HIDDEN_IMAGE
            if st.image == (0, 0):
                # a zombie (or a kernel thread): no memory left to read, but its final CPU times
                if proc is not None:
                    proc.user, proc.system = st.user_seconds, st.system_seconds
                    proc.last_seen = now
                    seen.add(pid)
                continue
            status = self._files.read(f"/proc/{pid}/status")
            hwm = capture.parse_high_water(status) if status else 0
            parts[pid] = parse_rss_parts(status) if status else (0, 0, 0)
            hwms[pid] = hwm
            if proc is not None and proc.image != st.image and (hidden or proc.image == _HIDDEN_IMAGE):
                # the addresses hid, or showed again: the same program (an exec meanwhile is missed)
                proc.image = proc.image if hidden else st.image
            elif proc is None or proc.image != st.image:
                proc = self._new_program(pid, st, proc, now)
            proc.last_seen = now
            proc.peak = max(proc.peak, hwm)
            proc.last_high_water, proc.last_high_water_at = hwm, now
            proc.user, proc.system = st.user_seconds, st.system_seconds
            per_process[pid] = st.resident_bytes
            seen.add(pid)
        self._forget_ended(seen)
        tree = sum(per_process.values())
        self._offer_needs(parts, hwms, now)
        if tree > self.max_sampled_tree:
            self.max_sampled_tree, self.max_sampled_tree_at = tree, now
        usage = self._group_usage(now)
        user = sum(p.user for p in self.processes)
        system = sum(p.system for p in self.processes)
        self.builder.add(now, tree, user, system, per_process, usage)
        self.last_resident = tree if usage is None else usage
        self.last_cpu = user + system
        if self.cpu.due(now):
            self._sample_cpu(now, final=False)
        self._samples += 1

    def _forget_ended(self, seen: set[int]) -> None:
        """The processes not seen this sample ended: their CPU carried to the next CPU interval."""
        for pid in [p for p in self._live if p not in seen]:
            ended = self._live.pop(pid)
            ended.alive = False
            self._ended_cpu[pid] = ended.user + ended.system
            self._files.close_prefix(f"/proc/{pid}/")

    def _group_usage(self, now: float) -> int | None:
        """The group's usage now (None without a group), its peak kept with when it was seen."""
        if self.group is None:
            return None
        usage = self.group.usage()
        peak = self.group.peak()  # after: a peak read first could be below the usage read next
        if peak > self._group_peak:
            self._group_peak, self.group_peak_at = peak, now
        return usage

    def _sample_cpu(self, now: float, *, final: bool) -> None:
        # the processes that ended since the last CPU interval carry their last CPU times into
        # it: what they used after the last interval is theirs too
        seconds = {**self._ended_cpu, **{pid: p.user + p.system for pid, p in self._live.items()}}
        self.cpu.sample(now, seconds, lambda pid: self._files.read(f"/proc/{pid}/io"), final=final)
        self._ended_cpu.clear()

    def finish_cpu(self) -> None:
        """The CPU series' last interval: from the last kept one to now (the run's end)."""
        self._sample_cpu(self.clock() - self.t0, final=True)

    def _offer_needs(self, parts: dict[int, tuple[int, int, int]], hwms: dict[int, int], now: float) -> None:
        """Offer this sample's tree need (``TreeNeeds``) to the running maximum: with a working
        set, once per window, the file pages referenced in it."""
        if not parts:
            return
        file = max(p[1] for p in parts.values())
        anon_shmem = self._anon_shmem(parts, now, file)
        ws = self.working_set
        if ws is None:
            if anon_shmem is not None:
                self.needs.offer(anon_shmem[0], file, anon_shmem[1], now)
            return
        if anon_shmem is not None:
            ws.note(anon_shmem[0], anon_shmem[1], file, now, {pid: p[1] for pid, p in parts.items()})
        if ws.due(now):
            window = ws.turn({pid: (hwms.get(pid, 0), p[1]) for pid, p in parts.items()}, now)
            if window is not None:
                self.needs.offer(*window)

    def finish_needs(self, peaks: dict[int, int]) -> None:
        """The working set's open window, at the end (its processes gone); ``peaks``: each
        process's final ``VmHWM``."""
        if self.working_set is not None:
            window = self.working_set.flush(peaks, self.clock() - self.t0)
            if window is not None:
                self.needs.offer(*window)

    def _anon_shmem(
        self, parts: dict[int, tuple[int, int, int]], now: float, file: int
    ) -> tuple[int, int] | None:
        """The tree's anonymous and shmem bytes now: their RSS with one process, their proportional
        shares (PSS) with several; None for a sample left out (PSS read too recently)."""
        anon = sum(p[0] for p in parts.values())
        shmem = sum(p[2] for p in parts.values())
        if len(parts) == 1 or anon + file + shmem <= self.needs.total:
            # one process: nothing shared; or the sum of RSS, an upper bound, is no new maximum
            return anon, shmem
        if now < self._pss_after:
            return None  # a sample whose sum would count shared pages twice: left out
        started = self.clock()
        anon = shmem = 0
        for pid in parts:
            raw = self._files.read(f"/proc/{pid}/smaps_rollup")
            if raw is None:
                continue  # ended since its status was read
            pss_anon, pss_shmem = parse_pss_parts(raw)
            anon, shmem = anon + pss_anon, shmem + pss_shmem
        self._pss_after = now + (self.clock() - started) / _PSS_SHARE
        return anon, shmem

    def kill_all(self) -> None:
        """SIGKILL every process of the tree that is still there."""
        pids = set(self.group.pids()) if self.group is not None else set()
        for pid in pids | set(self._live) | {self.root_pid}:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def close(self) -> None:
        self._files.close_all()
