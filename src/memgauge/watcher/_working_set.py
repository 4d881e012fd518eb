"""The file-backed pages a process actually uses: its file working set (issue 16).

A process's ``RssFile`` counts every library page it maps, but under a memory limit the kernel keeps
only the ones in use and drops the rest (they are re-read from disk if ever touched again). So the
need counts, per window of ``WINDOW_SECONDS``, only the file pages referenced in that window: at a
window's end the watcher reads each process's ``/proc/PID/smaps`` (``Referenced`` of its file
mappings) and clears their referenced bits by writing ``3`` to ``/proc/PID/clear_refs`` (the pages
of file-backed mappings only: a process's anonymous pages, its arrays and tensors, keep their bits,
so it pays nothing to set them again). It clears the accessed bits only: the ``VmHWM`` resets phases
make (``5``) are untouched, and so is every high-water mark the report reads.

Reading ``smaps`` walks every page table of the process: 10-20 ms of the watcher's CPU for a torch
process (40 ms with every core busy), about 4% of a CPU with windows back to back, taken from the
program's own threads when they use every core. So past the first ``BACK_TO_BACK`` windows, the
windows' reads take at most ``SHARE`` of the watcher's time: after a costly read the next window
opens (its bits cleared) only after a gap. Each window still lasts ``WINDOW_SECONDS``, so what a
window counts is the same; there are fewer of them, and the need takes their median.
"""

from __future__ import annotations

import os
import re
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

# how long a window lasts: the referenced file pages of a window are what the process used in it
WINDOW_SECONDS = 0.5
# the most of the watcher's time (its own CPU time, read with ``time.thread_time``) the windows'
# reads and clears may take: the window after one whose read took ``c`` seconds ends ``c / SHARE``
# seconds after that one ended, its 0.5 s at the end of it (a 20 ms read: one window every 2 s)
SHARE = 0.01
# the first windows close and open back to back whatever they cost: a short program's need is
# taken over the same windows as before, loaded or idle
BACK_TO_BACK = 4
# the windows after a process's first that its typical window needs (``typical_window``): the first
# BACK_TO_BACK windows close 0.5 s apart, so a process counts all its mapped file pages for its
# first 2 s, whatever the load
TYPICAL_WINDOWS = 3

# file mappings whose pages are shmem (tmpfs, memfd, SysV, shared anonymous), counted in
# ``RssShmem`` already
_SHMEM_PATHS = (b"/dev/shm/", b"/memfd:", b"/SYSV", b"/dev/zero", b"/run/shm/")


# a mapping's header (``start-end perms offset dev inode [path]``), or one of the three fields read
_FIELDS = re.compile(
    rb"^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ (\d+) *([^\n]*)|^(Rss|Anonymous|Referenced): +(\d+)", re.M
)


def parse_file_referenced(raw: bytes) -> int:
    """The referenced file-backed bytes of a ``/proc/PID/smaps`` text: over the mappings of a
    regular file, ``Referenced`` at most ``Rss`` less ``Anonymous`` (a private mapping's copied
    pages are anonymous, counted elsewhere)."""
    total = 0
    is_file = False
    values: dict[bytes, int] = {}
    for inode, path, key, value in _FIELDS.findall(raw):
        if not key:
            if is_file:
                total += _referenced(values)
            is_file = inode != b"0" and not path.startswith(_SHMEM_PATHS)
            values = {}
        elif is_file:
            values[key] = int(value) * 1024
    if is_file:
        total += _referenced(values)
    return total


def _referenced(values: dict[bytes, int]) -> int:
    rest = values.get(b"Rss", 0) - values.get(b"Anonymous", 0)
    return max(0, min(values.get(b"Referenced", 0), rest))


def clear_referenced(pid: int) -> bool:
    """Clear the accessed bits of the pages of ``pid``'s file-backed mappings (``clear_refs`` 3);
    False where it cannot be written (another user's process, a kernel without it, the process
    gone)."""
    try:
        fd = os.open(f"/proc/{pid}/clear_refs", os.O_WRONLY)
    except OSError:
        return False
    try:
        os.write(fd, b"3")
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def read_file_referenced(pid: int) -> int | None:
    """The file-backed bytes ``pid`` referenced since its bits were last cleared, None when its
    ``smaps`` cannot be read."""
    try:
        with open(f"/proc/{pid}/smaps", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return parse_file_referenced(raw) if raw else None


def typical_window(referenced: list[int]) -> int | None:
    """The file bytes a window of a process typically references: the median of its closed
    windows' (in order). One window's figure moves with what its half second happened to run (seen:
    7.9-16.0 MiB for bench/programs/sk_mlp.py's window at its anonymous peak, between runs), the
    median of several far less. A process's first window has no cleared bits: it counts every page
    touched since exec (imports included), so it is left out; with fewer than ``TYPICAL_WINDOWS``
    others, None: every mapped file page counts, as for a program that ends before any window
    closes. A median of one or two windows is a window's own figure again: seen, the need of
    tests/programs/fit_numpy.py, 1-2 s long, moved 224-237 MiB between loaded runs as its second
    window fell before or inside its numpy work."""
    if len(referenced) <= TYPICAL_WINDOWS:
        return None
    # the median by hand: ``statistics`` (fractions, decimal, random: ~4 ms) would be imported
    # after every such program ended, where each millisecond adds to the run
    ordered = sorted(referenced[1:])
    half = len(ordered) // 2
    return ordered[half] if len(ordered) % 2 else (ordered[half - 1] + ordered[half]) // 2


class FileWorkingSet:
    """The windows of a process tree's file working set, and the tree need over them: the largest,
    over windows, of the window's largest anonymous and shmem figure plus the file pages referenced
    in it (those of the process that referenced the most: shared libraries count once)."""

    def __init__(
        self,
        window: float = WINDOW_SECONDS,
        share: float = SHARE,
        cost: Callable[[], float] = time.thread_time,
    ) -> None:
        self.window = window
        self.share = share
        self.cost = cost
        self._ends = window
        # the time the next window opens (its bits cleared), when a gap follows the last one
        self._opens: float | None = None
        # the open window's largest (anon + shmem, anon, shmem, file RSS, at)
        self._pending: tuple[int, int, int, int, float] | None = None
        # the last closed window's file bytes in use (None before the first)
        self.last_file: int | None = None
        self.windows = 0
        # each process's closed windows' referenced file bytes
        self._referenced: dict[int, list[int]] = {}
        # each process's VmHWM at the last window's end, and its latest file RSS
        self._hwm: dict[int, int] = {}
        self._files: dict[int, int] = {}

    def note(self, anon: int, shmem: int, file_rss: int, at: float, files: dict[int, int]) -> None:
        """One sample's anonymous, shmem and (largest) file RSS figures, in the open window;
        ``files``: each process's file RSS now."""
        self._files.update(files)
        if self._pending is None or anon + shmem > self._pending[0]:
            self._pending = (anon + shmem, anon, shmem, file_rss, at)

    def due(self, now: float) -> bool:
        """Whether :meth:`turn` has work: a window ends, or the gap before the next one does."""
        return now >= (self._ends if self._opens is None else self._opens)

    def turn(self, procs: dict[int, tuple[int, int]], now: float) -> tuple[int, int, int, float] | None:
        """At a window's end, :meth:`close` it; at a gap's end, open the next window (clear the
        bits of ``procs``) and return None."""
        if self._opens is None:
            return self.close(procs, now)
        for pid in procs:
            clear_referenced(pid)
        self._opens, self._ends = None, now + self.window
        return None

    def close(self, procs: dict[int, tuple[int, int]], now: float) -> tuple[int, int, int, float] | None:
        """End the window: the file pages each process of ``procs`` (pid: its ``VmHWM`` and
        ``RssFile`` now) referenced in it, their bits cleared for the next, which opens now or,
        after a costly read, after a gap (``SHARE``). Returns the window's need as (anon, file,
        shmem, at): the larger of its largest sample's anonymous and shmem bytes plus the most file
        bytes a process referenced, and, for a process whose ``VmHWM`` rose in the window (exact
        between samples), that high-water mark less its file pages not typically referenced. None
        when no process could be read (the window stays open)."""
        started = self.cost()
        referenced = {pid: read_file_referenced(pid) for pid in procs}
        cleared = [clear_referenced(pid) for pid in procs]
        self._ends = now + self.window
        gap = (self.cost() - started) / self.share - self.window
        if gap > 0 and self.windows >= BACK_TO_BACK - 1:
            # cleared now all the same (whether they can be says whether this window's figures
            # hold), and again as the next window opens
            self._opens, self._ends = now + gap, now + gap + self.window
        read = {pid: r for pid, r in referenced.items() if r is not None}
        if not read or not any(cleared):
            # gone, or bits that cannot be cleared (another user's process): every mapped file
            # page counts, at the end (``flush``)
            return None
        for pid, r in read.items():
            self._referenced.setdefault(pid, []).append(r)
        # each process's own typical window (a child that maps a file uses it, whatever the others
        # do), that of the process using the most counted: shared libraries count once
        file = max(self._used(pid, procs[pid][1]) for pid in read)
        self.last_file, self.windows = file, self.windows + 1
        best: tuple[int, int, int, float] | None = None
        pending, self._pending = self._pending, None
        if pending is not None:
            _, anon, shmem, file_rss, at = pending
            best = (anon, min(file, file_rss) if file_rss else file, shmem, at)
        for pid in read:
            hwm, file_rss = procs[pid]
            if hwm != self._hwm.get(pid) and hwm > file_rss:
                rest = hwm - file_rss  # its anonymous and shmem pages at its high-water mark
                # the typical window's file bytes, as for a sample: this window's own moved with
                # what its half second ran (sk_mlp: 7.6% between cold and warm runs with it)
                used = min(file, file_rss)
                if best is None or rest + used > sum(best[:3]):
                    best = (rest, used, 0, now)
            self._hwm[pid] = hwm
        return best

    def _used(self, pid: int, mapped: int) -> int:
        """The file bytes process ``pid`` uses: its typical window, at most ``mapped`` (its file
        RSS); all of ``mapped`` before a second window of it closed."""
        typical = typical_window(self._referenced.get(pid, []))
        return mapped if typical is None else min(typical, mapped)

    def flush(self, peaks: dict[int, int], at: float) -> tuple[int, int, int, float] | None:
        """The open window's need at the end, when its processes are gone and its file pages can no
        longer be read: the last closed window's file bytes stand in (all the file RSS when no
        window closed). ``peaks``: each process's final ``VmHWM``; one that rose since the last
        window offers it less its file pages not in use (all of them kept for a process no second
        window read)."""
        best: tuple[int, int, int, float] | None = None
        pending, self._pending = self._pending, None
        if pending is not None:
            _, anon, shmem, file_rss, when = pending
            file = file_rss if self.last_file is None else min(self.last_file, file_rss)
            best = (anon, file, shmem, when)
        for pid, hwm in peaks.items():
            mapped = self._files.get(pid)
            if mapped is None or hwm == self._hwm.get(pid) or hwm <= mapped:
                continue
            used = self._used(pid, mapped)  # no window read it (it lived between two): all of it
            if best is None or hwm - mapped + used > sum(best[:3]):
                best = (hwm - mapped, used, 0, at)
        return best
