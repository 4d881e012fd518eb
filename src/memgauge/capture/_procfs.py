"""Reading the kernel's per-process counters from ``/proc``.

Plain file reads rather than psutil on the sampling path: one ``stat`` and one ``status`` read per
process per sample is all we need, and this module is also imported inside the measured process,
where every imported module adds to the footprint being measured.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class StatSample:
    """The fields of ``/proc/PID/stat`` we use.

    ``image`` identifies the program image: ``exec`` replaces the address space, and with ASLR the
    code and stack addresses change, so a changed ``image`` means the process exec'd and its
    earlier high-water mark belongs to the previous program.
    """

    # a plain class, not a dataclass: the measured process imports this module

    __slots__ = ("comm", "image", "ppid", "resident_bytes", "system_seconds", "user_seconds")

    def __init__(
        self,
        ppid: int,
        comm: str,
        resident_bytes: int,
        user_seconds: float,
        system_seconds: float,
        image: tuple[int, int],
    ) -> None:
        self.ppid, self.comm, self.resident_bytes = ppid, comm, resident_bytes
        self.user_seconds, self.system_seconds, self.image = user_seconds, system_seconds, image


def read_stat(pid: int) -> StatSample | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return parse_stat(raw)


def parse_stat(raw: bytes) -> StatSample | None:
    # comm may contain spaces and parentheses: split at the last ')'
    lpar, rpar = raw.find(b"("), raw.rfind(b")")
    fields = raw[rpar + 2 :].split()
    if len(fields) < 26:
        return None
    # fields[0] is field 3 (state); field N is fields[N - 3]
    return StatSample(
        ppid=int(fields[1]),
        comm=raw[lpar + 1 : rpar].decode(errors="replace"),
        resident_bytes=int(fields[21]) * PAGE_SIZE,
        user_seconds=int(fields[11]) / CLOCK_TICKS,
        system_seconds=int(fields[12]) / CLOCK_TICKS,
        image=(int(fields[23]), int(fields[25])),
    )


def parse_high_water(raw: bytes) -> int:
    i = raw.find(b"VmHWM:")
    if i < 0:
        return 0
    return int(raw[i + 6 : raw.index(b"kB", i)]) * 1024


class OpenFiles:
    """Files read again and again, kept open and re-read with ``pread``: one system call a read
    instead of three, and no Python file object. A ``/proc/PID`` file stays bound to its process:
    once the process is gone, reads fail instead of reaching a new process with the same pid."""

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}

    def read(self, path: str, size: int = 4096) -> bytes | None:
        fd = self._fds.get(path)
        try:
            if fd is None:
                fd = self._fds[path] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            data = os.pread(fd, size, 0)
            while len(data) == size:  # a file larger than one read
                size *= 2
                data = os.pread(fd, size, 0)
        except OSError:
            self.close(path)
            return None
        return data

    def close(self, path: str) -> None:
        fd = self._fds.pop(path, None)
        if fd is not None:
            os.close(fd)

    def close_prefix(self, prefix: str) -> None:
        for path in [p for p in self._fds if p.startswith(prefix)]:
            self.close(path)

    def close_all(self) -> None:
        for path in list(self._fds):
            self.close(path)


# /proc/self/task/TID/stat files kept open (re-read with pread); threads past this many are read by
# opening the file each time, so that a program with a thousand threads keeps its file descriptors
STAT_FDS = 64


def thread_cpu_clock(tid: int) -> int:
    # the kernel's per-thread CPU clock id (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)): one system
    # call, and a dead thread gives an error instead of a crash (pthread_getcpuclockid would not)
    return ((~tid) << 3) | 6


def main_thread() -> tuple[int | None, int | None]:
    """The main thread's ident, and its native id where no Thread object will say it: in a process
    that has not imported ``threading`` (memgauge does not, ~5 ms of every measured process) there
    are no Thread objects, and no thread but the caller, the main one."""
    import sys

    threading = sys.modules.get("threading")
    if threading is not None:
        return threading.main_thread().ident, None
    import _thread

    return _thread.get_ident(), _thread.get_native_id()


class ThreadState:
    """One thread of this process, as the line sampler follows it."""

    __slots__ = ("clock", "cpu_ns", "read_ns", "stat_fd")

    def __init__(self, tid: int) -> None:
        self.clock = thread_cpu_clock(tid)
        self.cpu_ns = 0
        self.read_ns = 0  # time.monotonic_ns() at the last read of cpu_ns; 0: never read
        self.stat_fd = -1

    def cpu_since(self, first_ns: float) -> float:
        """The thread's CPU time since its last read, in ns, at most the wall time since that
        read (``first_ns`` at the first read). The bound is the read's own span, not the
        sample's: the sampler reads a thread's clock some time after its sample's clock, and
        that delay moves (reading /proc lets go of the GIL, and the program runs up to a switch
        interval), so a bound on the sample's span cut off CPU time that no later sample got
        back: a thread under a 100 ms switch interval lost up to half of its time."""
        try:
            now_ns = time.clock_gettime_ns(self.clock)
        except OSError:
            return 0.0
        read_ns = time.monotonic_ns()
        span = read_ns - self.read_ns if self.read_ns else first_ns
        cpu = float(min(max(now_ns - self.cpu_ns, 0), span))
        self.cpu_ns, self.read_ns = now_ns, read_ns
        return cpu

    def cpu_until(self, mark_ns: int) -> float:
        """The thread's CPU time from its last read to ``mark_ns`` (its CPU clock then, read by the
        thread itself), in ns; the clock's reading moves to the mark. 0.0 before a first read."""
        if not self.read_ns:
            return 0.0
        cpu = float(max(0, min(mark_ns - self.cpu_ns, time.monotonic_ns() - self.read_ns)))
        self.cpu_ns = max(self.cpu_ns, mark_ns)
        return cpu


class OwnThreads:
    """The threads of this process seen so far, by native id: each one's CPU clock, and whether it
    is on a CPU now (its ``stat`` file, kept open for the first ``STAT_FDS`` threads)."""

    def __init__(self) -> None:
        self.states: dict[int, ThreadState] = {}
        self.stat_fds = 0

    def state(self, tid: int) -> ThreadState:
        state = self.states.get(tid)
        if state is None:
            state = self.states[tid] = ThreadState(tid)
        return state

    def running(self, state: ThreadState, tid: int) -> bool:
        try:
            if state.stat_fd >= 0:
                raw = os.pread(state.stat_fd, 256, 0)
            else:
                fd = os.open(f"/proc/self/task/{tid}/stat", os.O_RDONLY | os.O_CLOEXEC)
                raw = os.pread(fd, 256, 0)
                if self.stat_fds < STAT_FDS:
                    state.stat_fd = fd
                    self.stat_fds += 1
                else:
                    os.close(fd)
        except OSError:
            return False
        return raw[raw.rfind(b")") + 2 : raw.rfind(b")") + 3] == b"R"

    def keep(self, alive: set[int]) -> None:
        """Forget the threads not in ``alive``: they ended."""
        if len(self.states) > len(alive):
            for tid in [t for t in self.states if t not in alive]:
                fd = self.states.pop(tid).stat_fd
                if fd >= 0:
                    os.close(fd)
                    self.stat_fds -= 1

    def close(self) -> None:
        fds = [state.stat_fd for state in self.states.values()]
        for state in self.states.values():
            state.stat_fd = -1
        self.stat_fds = 0
        for fd in fds:
            if fd >= 0:
                try:  # noqa: SIM105 - no contextlib in the measured process
                    os.close(fd)
                except OSError:
                    pass


def read_high_water(pid: int | str = "self") -> int | None:
    """``VmHWM``: the exact resident high-water mark of one process, or None if it has gone."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            return parse_high_water(f.read()) or None
    except OSError:
        return None


def read_resident(pid: int | str = "self") -> int | None:
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * PAGE_SIZE
    except (OSError, IndexError, ValueError):
        return None


def reset_high_water(pid: int | str = "self") -> bool:
    """Reset ``VmHWM`` to the current RSS (Linux >= 4.0). False where the kernel or permissions
    do not allow it; callers must then treat later ``VmHWM`` readings as covering the whole life."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def read_cmdline(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return [a.decode(errors="replace") for a in raw.split(b"\0")[:-1]] if raw else []


def read_children(pid: int) -> list[int]:
    """Children forked by the main thread of ``pid`` (``CONFIG_PROC_CHILDREN``)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as f:
            return [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        return []


def scan_ppids() -> dict[int, int]:
    """pid -> ppid of every process on the machine (a full ``/proc`` scan, ~1 ms)."""
    out: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            st = read_stat(int(entry.name))
            if st is not None:
                out[int(entry.name)] = st.ppid
    return out


def orphaned_entries(directory: str, prefix: str) -> list[str]:
    """Paths in ``directory`` named ``PREFIX<pid>-...`` whose owning memgauge (``pid``) is gone:
    what a memgauge killed by SIGKILL or the OOM killer could not clean up."""
    try:
        names = [n for n in os.listdir(directory) if n.startswith(prefix)]
    except OSError:
        return []
    out = []
    for name in names:
        owner = name[len(prefix) :].split("-", 1)[0]
        if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
            out.append(os.path.join(directory, name))
    return out


def kill_until_gone(find: Callable[[], list[int]], timeout: float, pause: float = 0.005) -> None:
    """SIGKILL the processes ``find`` lists until it lists none (or ``timeout`` passes). Repeated:
    a process may fork between the listing and the kill (not after: a pending SIGKILL stops fork)."""
    import contextlib
    import signal
    import time

    deadline = time.monotonic() + timeout
    while True:
        pids = find()
        if not pids or time.monotonic() > deadline:
            return
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(pause)
