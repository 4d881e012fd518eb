"""The outside sampler's /proc poller: one process's resident size and its threads' CPU and
run-queue time, read from outside it every 10 ms (``OutsideLines`` joins them with py-spy's stacks)."""

from __future__ import annotations

import contextlib
import os

from memgauge.capture import parse_high_water

_PAGE = os.sysconf("SC_PAGE_SIZE")


class ProcessPoller:
    """Reads one process's resident size and its threads' schedstat and state, 100 times a second:
    the files are kept open and read with ``pread`` (an ``open`` a file a poll cost the runner's
    poller about four fifths of its time); the thread list is read again every ``RESCAN`` polls."""

    RESCAN = 1

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.statm = os.open(f"/proc/{pid}/statm", os.O_RDONLY | os.O_CLOEXEC)
        self.threads: dict[int, tuple[int, int]] = {}  # tid -> (schedstat fd, stat fd)
        self.polls = 0
        self.status = -1  # /proc/PID/status, opened on the first ``high_water``

    def _rescan(self) -> None:
        try:
            tids = {int(t) for t in os.listdir(f"/proc/{self.pid}/task")}
        except OSError:
            return
        for tid in set(self.threads) - tids:
            self._drop(tid)
        for tid in tids - set(self.threads):
            try:
                sched = os.open(f"/proc/{self.pid}/task/{tid}/schedstat", os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                stat = os.open(f"/proc/{self.pid}/task/{tid}/stat", os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                os.close(sched)
                continue
            self.threads[tid] = (sched, stat)

    def _drop(self, tid: int) -> None:
        for fd in self.threads.pop(tid, ()):
            with contextlib.suppress(OSError):
                os.close(fd)

    def poll(self) -> tuple[int, dict[int, tuple[int, int, bool]]] | None:
        """Resident bytes and, per thread, (ns on a CPU, ns runnable without one, whether it is
        on a CPU or runnable now); None once the process is gone."""
        try:
            rss = int(os.pread(self.statm, 64, 0).split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            return None
        if self.polls % self.RESCAN == 0:
            self._rescan()
        self.polls += 1
        out: dict[int, tuple[int, int, bool]] = {}
        for tid, (sched, stat) in list(self.threads.items()):
            try:
                run, delay = os.pread(sched, 64, 0).split()[:2]
                state = os.pread(stat, 512, 0).rpartition(b")")[2][1:2]
                out[tid] = (int(run), int(delay), state == b"R")
            except (OSError, ValueError):
                self._drop(tid)  # the thread ended
        return rss, out

    def high_water(self) -> int:
        """The process's resident high-water mark (VmHWM) now; 0 where it cannot be read."""
        try:
            if self.status < 0:
                self.status = os.open(f"/proc/{self.pid}/status", os.O_RDONLY | os.O_CLOEXEC)
            return parse_high_water(os.pread(self.status, 4096, 0))
        except (OSError, ValueError):
            return 0

    def close(self) -> None:
        for tid in list(self.threads):
            self._drop(tid)
        for fd in (self.statm, self.status):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
