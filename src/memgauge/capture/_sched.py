"""How long each thread of this process waited, runnable, for a CPU: the second field of
``/proc/self/task/TID/schedstat`` (run delay, in nanoseconds). Time a thread spends queued behind
other work on a busy machine is not I/O wait: the line sampler (``_sampler``) reports it apart, as
CPU contention.

Plain ``os`` only: this module is imported into every measured process whose lines are sampled.
"""

from __future__ import annotations

import os

# schedstat files kept open (re-read with pread); threads past this many are read by opening the
# file each time, so that a program with a thousand threads keeps its file descriptors
DELAY_FDS = 64


# futex, the system call a thread waiting for the GIL (or a lock) sleeps in, per machine
_FUTEX = {"x86_64": 202, "aarch64": 98, "riscv64": 98, "ppc64le": 221, "s390x": 238}.get(os.uname().machine)


def off_cpu_in_syscall(tid: int) -> bool:
    """Whether thread ``tid`` is off a CPU in a system call other than futex: sleeping, reading,
    polling (``/proc/self/task/TID/syscall``). A thread waiting for the GIL sleeps in futex: a
    sampler that got the GIL late cannot otherwise tell it from one that blocked in a call and let
    the GIL go there. False where it cannot be told (another machine, no such file)."""
    if _FUTEX is None:
        return False
    try:
        fd = os.open(f"/proc/self/task/{tid}/syscall", os.O_RDONLY | os.O_CLOEXEC)
        try:
            first = os.pread(fd, 32, 0).split(b" ", 1)[0]
        finally:
            os.close(fd)
        return first.isdigit() and int(first) != _FUTEX
    except (OSError, ValueError):
        return False


def run_delay(fd: int) -> int:
    """The run delay in an open schedstat file ``fd``; 0 where it cannot be read."""
    try:
        return int(os.pread(fd, 128, 0).split()[1])
    except (OSError, ValueError, IndexError):
        return 0


class RunDelays:
    """Per thread (native id): its run delay when last read, and its schedstat file."""

    def __init__(self) -> None:
        self.last: dict[int, int] = {}
        self.fds: dict[int, int] = {}

    def _read(self, tid: int) -> int | None:
        fd = self.fds.get(tid, -1)
        try:
            if fd >= 0:
                raw = os.pread(fd, 128, 0)
            else:
                fd = os.open(f"/proc/self/task/{tid}/schedstat", os.O_RDONLY | os.O_CLOEXEC)
                raw = os.pread(fd, 128, 0)
                if len(self.fds) < DELAY_FDS:
                    self.fds[tid] = fd
                else:
                    os.close(fd)
            return int(raw.split()[1])
        except (OSError, ValueError, IndexError):
            return None  # no schedstat (a kernel without CONFIG_SCHED_INFO), or the thread ended

    def delta(self, tid: int) -> int:
        """Nanoseconds ``tid`` spent runnable without a CPU since the last call (0 the first time
        and where the kernel does not say)."""
        now = self._read(tid)
        if now is None:
            return 0
        before = self.last.get(tid)
        self.last[tid] = now
        return max(0, now - before) if before is not None else 0

    def keep(self, alive: set[int]) -> None:
        """Forget the threads not in ``alive``: they ended."""
        if len(self.last) > len(alive) or len(self.fds) > len(alive):
            for tid in [t for t in self.last if t not in alive]:
                del self.last[tid]
            for tid in [t for t in self.fds if t not in alive]:
                os.close(self.fds.pop(tid))

    def close(self) -> None:
        fds = list(self.fds.values())
        self.fds.clear()
        for fd in fds:
            try:  # noqa: SIM105 - no contextlib in the measured process
                os.close(fd)
            except OSError:
                pass
