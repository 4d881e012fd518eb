"""Line sampling inside a measured Python process.

A thread of its own (started with ``_thread``, invisible to ``threading``, blocking every signal)
wakes every ``interval`` and, holding the GIL, reads every Python thread's stack
(``sys._current_frames``), every thread's CPU clock, the process's CPU clock and its resident size.
Between two samples:

* each thread's CPU time goes to the line it is on, as *native* when the thread can run without the
  GIL (it is on a CPU while the sampler holds the GIL: C code that released it: numpy, BLAS, torch)
  or when the GIL came back only long after it was asked for (C code that kept it), else as
  *Python*; the rest of the interval is *waiting* (I/O, sleep, locks, the GIL);
* CPU time of threads without Python frames (BLAS and OpenMP pools) is native time of the lines
  running native code meanwhile, else of the pseudo-line ``<native>``;
* the change of resident memory goes to the lines of the threads that ran, in proportion to their
  CPU time; a ledger keeps, last in first out, which lines' growth is still resident, so the ledger
  at the highest sample says which lines hold the process's peak.

Everything is aggregated here: memory use does not grow with run time. The aggregate is written as
``lines.<pid>.json`` in the events directory every few seconds and at exit, so a killed process
loses at most the last few seconds. Plain classes, and only small modules (``os``, ``sys``,
``threading``, ``time``, and the C modules ``_thread``, ``_signal``, ``_json``): this module is
imported into every measured process.
"""

from __future__ import annotations

import _thread
import os
import sys
import threading
import time

from memgauge.capture._events import ENV_EVENTS_DIR, ENV_LINES
from memgauge.capture._frames import forked_to_exec, is_library, is_own
from memgauge.capture._procfs import parse_high_water

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal as _signal
    from collections.abc import Callable
    from types import CodeType, FrameType
    from typing import Any, NoReturn

    Key = tuple[str, int, str]
else:
    import _signal  # signal itself imports enum: not into every measured process

INTERVAL = 0.01
# the aggregate is written at most every FLUSH_SECONDS, and at most 2% of the time (a process
# killed by a signal, a pool worker terminated, keeps what was last written)
FLUSH_SECONDS = 0.5
FLUSH_SHARE = 0.02
MAX_DEPTH = 48  # user frames kept per stack, innermost first
MAX_WALK = 1024  # frames looked at: import machinery nests deep above the user's line
SERIES_POINTS = 128
LEDGER_MAX = 4096
# only lines retaining at least this much at the end carry a time series (for leak detection)
SERIES_MIN_BYTES = 1 << 20
STARTUP_KEY: Key = ("<startup>", 0, "interpreter start-up")
INHERITED_KEY: Key = ("<inherited>", 0, "memory of the parent at fork")
UNKNOWN_KEY: Key = ("<unknown>", 0, "no Python frame")
OWN_KEY: Key = ("<memgauge>", 0, "memgauge's own code")
# the baseline of a sampler started inside a running program (``memgauge.profile(lines=True)``):
# what the process held when the block began, which no line of the block made
BEFORE_KEY: Key = ("<before>", 0, "resident before the block")
# CPU time of threads without Python frames while no Python thread ran native code (a BLAS pool
# spinning after its call returned): charged to no line, so every line's time adds up to its wall
NATIVE_THREADS_KEY: Key = ("<native>", 0, "threads without Python frames")

# /proc/self/task/TID/stat files kept open (re-read with pread); threads past this many are read by
# opening the file each time, so that a program with a thousand threads keeps its file descriptors
STAT_FDS = 64

# the C string encoder of the json package, without importing json (and re, enum, ...)
from _json import encode_basestring_ascii as _encode_str  # noqa: E402


def _dump(obj: object, out: list[str]) -> None:
    """JSON of the plain data ``to_dict`` makes. ``json`` is not imported into the measured process:
    it imports ``re``, ``enum`` and more, and imported late from the sampler's thread it could pick
    up the program's own module of the same name from the script's directory."""
    if isinstance(obj, str):
        out.append(_encode_str(obj))
    elif obj is None or isinstance(obj, bool):
        out.append("null" if obj is None else "true" if obj else "false")
    elif isinstance(obj, int):
        out.append(str(obj))
    elif isinstance(obj, float):
        out.append(repr(obj) if -_INF < obj < _INF else "0")  # JSON has no nan or inf
    elif isinstance(obj, dict):
        out.append("{")
        for i, (key, value) in enumerate(obj.items()):
            if i:
                out.append(",")
            out.append(_encode_str(str(key)))
            out.append(":")
            _dump(value, out)
        out.append("}")
    elif isinstance(obj, (list, tuple)):
        out.append("[")
        for i, value in enumerate(obj):
            if i:
                out.append(",")
            _dump(value, out)
        out.append("]")
    else:
        raise TypeError(f"not plain data: {type(obj).__name__}")


_INF = float("inf")
_PAGE = os.sysconf("SC_PAGE_SIZE")
_OWN, _LIB, _USER = 0, 1, 2


def _cpu_clock(tid: int) -> int:
    # the kernel's per-thread CPU clock id (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)): one system
    # call, and a dead thread gives an error instead of a crash (pthread_getcpuclockid would not)
    return ((~tid) << 3) | 6


class _ThreadState:
    __slots__ = ("clock", "cpu_ns", "stat_fd")

    def __init__(self, tid: int) -> None:
        self.clock = _cpu_clock(tid)
        self.cpu_ns = 0
        self.stat_fd = -1


class Sampler:
    """The aggregate and the ledger, fed by :meth:`sample`. ``clock`` and the readers are
    injectable so tests can drive it step by step."""

    def __init__(
        self,
        directory: str,
        *,
        lib: bool = False,
        interval: float = INTERVAL,
        base_key: Key = STARTUP_KEY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.directory = directory
        self.lib = lib
        self.interval = interval
        self.clock = clock
        self.pid = os.getpid()
        self.kinds: dict[str, int] = {}
        # key -> [cpu_python_s, cpu_native_s, wait_s, growth_bytes, samples]
        self.lines: dict[Key, list[float]] = {}
        self.stack_ids: dict[tuple[Key, ...], int] = {}
        self.stacks: list[tuple[Key, ...]] = []
        self.ledger: list[list[int]] = []  # [stack id, bytes], oldest first
        self.retained: dict[int, int] = {}
        self.inclusive: dict[Key, int] = {}
        self.series: dict[Key, list[tuple[float, int]]] = {}
        self.threads: dict[int, _ThreadState] = {}
        self.statm = os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC)
        self.status = -1
        self.t_start = clock()
        self.rss = self.resident()
        self.max_rss = self.rss
        self.peak_t = self.t_start
        self.cpu_ns = time.process_time_ns()
        self.last_t = self.t_start
        self.base_sid = self._stack_id((base_key,))
        self._credit_ledger(self.base_sid, self.rss, self.t_start)
        self.peak_retained = dict(self.retained)
        self.own_running = False  # the last sample found only memgauge's own code running
        self.own_ident = -1
        self.own_clock = -1
        self.own_cpu_ns = 0
        self.main_ident = threading.main_thread().ident
        self.imports: list[list[Any]] = []
        self.stopped = False
        self.closed = False
        # threads whose Thread object holds a stale native_id: the thread that forked, in the child
        self.native_ids: dict[int, int] = {}
        if base_key is INHERITED_KEY:
            # the thread that forked keeps its Thread object, whose native_id is the parent's
            self.native_ids[threading.get_ident()] = threading.get_native_id()
        self.stat_fds = 0
        self.done = _thread.allocate_lock()  # held while the sampler thread runs
        # the thread waits on it between samples, held, so that stop() wakes it at once instead
        # of after up to an interval (a sampler stopped once per test: 10 ms a test)
        self.wake = _thread.allocate_lock()
        self.wake.acquire()
        self.last_flush = self.t_start
        self.flush_every = FLUSH_SECONDS

    # --- readers ---------------------------------------------------------------------------
    def resident(self) -> int:
        try:
            return int(os.pread(self.statm, 64, 0).split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            return 0

    def _thread_running(self, state: _ThreadState, tid: int) -> bool:
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

    # --- frames ----------------------------------------------------------------------------
    def _kind(self, filename: str) -> int:
        kind = self.kinds.get(filename)
        if kind is None:
            kind = _OWN if is_own(filename) else _LIB if is_library(filename) else _USER
            self.kinds[filename] = kind
        return kind

    def _keys(self, frame: FrameType | None) -> list[Key]:
        """The frames to charge, innermost first: user frames, or every frame with ``lib``;
        the innermost library frame when no user frame is on the stack."""
        keys: list[Key] = []
        fallback: Key | None = None
        own = False
        users = 0  # keys[:users] ends with the outermost user frame seen so far
        depth = 0
        while frame is not None and depth < MAX_WALK and len(keys) < MAX_DEPTH:
            code = frame.f_code
            kind = self._kind(code.co_filename)
            if kind == _USER or (kind == _LIB and self.lib):
                keys.append((code.co_filename, frame.f_lineno or 0, code.co_name))
                if kind == _USER:
                    users, own = len(keys), False
            elif kind == _LIB:
                if fallback is None:
                    fallback = (code.co_filename, frame.f_lineno or 0, code.co_name)
            else:
                own = True
            frame = frame.f_back
            depth += 1
        if own and self.lib:
            # memgauge's frames outside every user frame: the library frames between them (runpy
            # running the script) are memgauge's, and with no user frame the whole stack is
            del keys[users:]
        if not keys and fallback is not None and not own:
            # library code with no user code under it (a pool's worker thread), but not memgauge's
            # own start-up (the bootstrap importing what it needs)
            keys.append(fallback)
        if not keys and own:
            self.own_running = True
        return keys

    def _stack_id(self, stack: tuple[Key, ...]) -> int:
        sid = self.stack_ids.get(stack)
        if sid is None:
            sid = len(self.stacks)
            self.stack_ids[stack] = sid
            self.stacks.append(stack)
        return sid

    # --- ledger ----------------------------------------------------------------------------
    def _change(self, sid: int, delta: int, t: float) -> None:
        left = self.retained.get(sid, 0) + delta
        if left:
            self.retained[sid] = left
        else:
            self.retained.pop(sid, None)
        for key in set(self.stacks[sid]):
            value = self.inclusive.get(key, 0) + delta
            self.inclusive[key] = value
            points = self.series.get(key)
            if points is None:
                points = self.series[key] = []
            points.append((t, value))
            if len(points) > SERIES_POINTS:
                del points[-2::-2]  # every other point, keeping the latest: the spacing doubles

    def _credit_ledger(self, sid: int, delta: int, t: float) -> None:
        if self.ledger and self.ledger[-1][0] == sid:
            self.ledger[-1][1] += delta
        else:
            self.ledger.append([sid, delta])
            if len(self.ledger) > LEDGER_MAX:
                self._compact()
        self._change(sid, delta, t)

    def _release(self, amount: int, t: float) -> None:
        while amount > 0 and self.ledger:
            entry = self.ledger[-1]
            take = min(entry[1], amount)
            entry[1] -= take
            amount -= take
            self._change(entry[0], -take, t)
            if entry[1] == 0:
                self.ledger.pop()

    def _compact(self) -> None:
        # merge entries of one stack at the position of its latest: bounded memory, and the
        # last-in-first-out order is kept for what is recent
        merged: dict[int, int] = {}
        for sid, size in self.ledger:
            merged[sid] = merged.pop(sid, 0) + size
        self.ledger = [[sid, size] for sid, size in merged.items() if size > 0]

    # --- sampling --------------------------------------------------------------------------
    def sample(self, lateness: float = 0.0) -> None:
        t = self.clock()
        wall = t - self.last_t
        self.last_t = t
        if wall <= 0:
            return
        wall_ns = wall * 1e9
        # Stacks first, as close as can be to the moment the GIL came back, and no frame kept
        # past this block: a frame object outlives its function's return while anything holds it,
        # and keeps that function's locals alive with it. Reading /proc lets go of the GIL, so a
        # frame still held then could keep a buffer the program already dropped resident while it
        # allocates the next: memgauge would raise the very peak it measures.
        stacks = self._stacks()
        rss = self.resident()
        active = threading._active  # type: ignore[attr-defined]  # ident -> Thread, no copy
        cpu_total = time.process_time_ns()
        spent = cpu_total - self.cpu_ns
        self.cpu_ns = cpu_total
        if self.own_clock >= 0:
            try:
                own = time.clock_gettime_ns(self.own_clock)
            except OSError:
                own = self.own_cpu_ns
            spent -= own - self.own_cpu_ns
            self.own_cpu_ns = own
        # How long the GIL took to come back tells who had it: at once, nobody (threads on a CPU
        # run C code that released it); after about the switch interval, Python code (it had
        # to be asked to let go); much later, C code that kept it.
        switch = sys.getswitchinterval()  # the program may change it
        gil_free = lateness < switch / 2
        held_long = lateness > 2 * switch + 0.005
        # (keys, cpu_ns, native) per Python thread, the main thread first: it gets what belongs
        # to no thread
        seen: list[tuple[list[Key], float, bool]] = []
        stall: list[Key] | None = None
        python_cpu = 0.0
        alive: set[int] = set()
        # the main thread's user line: what a busy library thread with no user frame of its own (a
        # pool's worker: pandas reading a CSV, a ThreadPoolExecutor running a library call) is
        # charged to, as the line that most likely waits for it
        main_keys = next((k for i, k, _ in stacks if i == self.main_ident), None)
        if main_keys is not None and (self.lib or self._kind(main_keys[0][0]) != _USER):
            main_keys = None
        for ident, own_keys, own_position in stacks:
            keys, position = own_keys, own_position
            tid = self.native_ids.get(ident)
            if tid is None:
                thread = active.get(ident)
                tid = getattr(thread, "native_id", None) if thread is not None else None
            cpu = 0.0
            native = False
            if tid is not None:
                alive.add(tid)
                state = self.threads.get(tid)
                if state is None:
                    state = self.threads[tid] = _ThreadState(tid)
                try:
                    now_ns = time.clock_gettime_ns(state.clock)
                except OSError:
                    now_ns = state.cpu_ns
                cpu = float(min(max(now_ns - state.cpu_ns, 0), wall_ns))
                state.cpu_ns = now_ns
                if cpu > 0 and main_keys is not None and self._kind(keys[0][0]) == _LIB:
                    keys, position = list(main_keys), None
                if cpu > 0:
                    python_cpu += cpu
                    # the GIL holder ran for a good part of the wait, even on a busy machine
                    stalled = held_long and cpu > wall_ns / 4
                    # with the GIL free, a thread that is not on a CPU now (sleeping, reading)
                    # spent its CPU time before it blocked: in Python, most likely
                    native = stalled or (gil_free and self._thread_running(state, tid))
                    if stalled:
                        if position is not None:
                            self._recover_stalled(position, keys)
                        stall = keys
            if ident == self.main_ident:
                seen.insert(0, (keys, cpu, native))
            else:
                seen.append((keys, cpu, native))
        if len(self.threads) > len(alive):
            for tid in [t for t in self.threads if t not in alive]:
                fd = self.threads.pop(tid).stat_fd
                if fd >= 0:
                    os.close(fd)
                    self.stat_fds -= 1
        if not seen:
            self._memory(t, rss, [])
            return
        # CPU of threads without Python frames (BLAS, OpenMP): native time of the lines that run
        # native code now, else of no line
        unowned = max(0.0, spent - python_cpu)
        native_cpu = sum(c for _, c, n in seen if n)
        for keys, cpu, native in seen:
            stats = self.lines.get(keys[0])
            if stats is None:
                stats = self.lines[keys[0]] = [0.0, 0.0, 0.0, 0.0, 0.0]
            if native:
                stats[1] += (cpu + (unowned * cpu / native_cpu if native_cpu else 0.0)) / 1e9
            else:
                stats[0] += cpu / 1e9
            stats[2] += max(0.0, wall_ns - cpu) / 1e9
            stats[4] += 1
        if unowned > 0 and not native_cpu:
            stats = self.lines.get(NATIVE_THREADS_KEY)
            if stats is None:
                stats = self.lines[NATIVE_THREADS_KEY] = [0.0, 0.0, 0.0, 0.0, 0.0]
            stats[1] += unowned / 1e9
        if stall is not None:
            self._stalled_peak(t, stall)
        self._memory(t, rss, seen)

    def _stacks(self) -> list[tuple[int, list[Key], tuple[CodeType, int] | None]]:
        """(thread ident, keys, position) of every Python thread but the sampler's own. Nothing in
        here lets go of the GIL, and no frame survives the return."""
        self.own_running = False
        frames = sys._current_frames()
        frames.pop(self.own_ident, None)
        stacks: list[tuple[int, list[Key], tuple[CodeType, int] | None]] = []
        for ident, frame in frames.items():
            keys = self._keys(frame)
            if keys:
                stacks.append((ident, keys, self._position(frame, keys)))
        return stacks

    def _position(self, frame: FrameType | None, keys: list[Key]) -> tuple[CodeType, int] | None:
        """Code and current instruction of the frame ``keys[0]`` stands for, when it is the
        innermost frame apart from memgauge's own (an import reaches its import hook first)."""
        while frame is not None and self._kind(frame.f_code.co_filename) == _OWN:
            frame = frame.f_back
        if frame is None or frame.f_code.co_filename != keys[0][0]:
            return None  # library code ran innermost: charged to the user line that called it
        return frame.f_code, frame.f_lasti

    def _recover_stalled(self, position: tuple[CodeType, int], keys: list[Key]) -> None:
        """Charge a long GIL-holding operation to its own line (see ``_bytecode``)."""
        from memgauge.capture._bytecode import stalled_line

        line = stalled_line(*position)
        if line is not None:
            keys[0] = (keys[0][0], line, keys[0][2])

    def _stalled_peak(self, t: float, keys: list[Key]) -> None:
        """A thread kept the GIL through a long C operation: the process may have peaked and
        come down again before the sampler could look. The kernel's high-water mark says how
        high; the growth above the last sample is charged to the line that held the GIL."""
        try:
            if self.status < 0:
                self.status = os.open("/proc/self/status", os.O_RDONLY | os.O_CLOEXEC)
            hwm = parse_high_water(os.pread(self.status, 4096, 0))
        except OSError:
            return
        if hwm > self.max_rss and hwm > self.rss:
            snapshot = dict(self.retained)
            sid = self._stack_id(tuple(reversed(keys)))
            snapshot[sid] = snapshot.get(sid, 0) + hwm - self.rss
            self.max_rss, self.peak_t, self.peak_retained = hwm, t, snapshot

    def _memory(self, t: float, rss: int, seen: list[tuple[list[Key], float, bool]]) -> None:
        delta = rss - self.rss
        self.rss = rss
        if delta == 0 or not rss:
            return
        weights = [(keys, cpu) for keys, cpu, _ in seen if cpu > 0] or [
            (keys, 1.0) for keys, _, _ in seen[:1]
        ]
        total = sum(w for _, w in weights)
        if delta > 0:
            if not weights:
                # before the program's first line: start-up (the interpreter, memgauge's bootstrap)
                if not self.lines:
                    sid = self.base_sid
                else:
                    sid = self._stack_id((OWN_KEY if self.own_running else UNKNOWN_KEY,))
                self._credit_ledger(sid, delta, t)
            for keys, w in weights:
                share = round(delta * w / total)
                self.lines[keys[0]][3] += share
                self._credit_ledger(self._stack_id(tuple(reversed(keys))), share, t)
            if rss > self.max_rss:
                self.max_rss = rss
                self.peak_t = t
                self.peak_retained = dict(self.retained)
        else:
            for keys, w in weights:
                self.lines[keys[0]][3] += round(delta * w / total)
            self._release(-delta, t)

    # --- output ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        keys: dict[Key, int] = {}

        def index(key: Key) -> int:
            i = keys.get(key)
            if i is None:
                i = keys[key] = len(keys)
            return i

        lines = [[index(k), *v] for k, v in self.lines.items()]
        stacks_used: dict[int, list[int]] = {}
        for sid in list(self.peak_retained) + list(self.retained):
            if sid not in stacks_used:
                stacks_used[sid] = [index(k) for k in self.stacks[sid]]
        series = [
            [index(k), [[round(t, 4), b] for t, b in points]]
            for k, points in self.series.items()
            if self.inclusive.get(k, 0) >= SERIES_MIN_BYTES
        ]
        return {
            "pid": self.pid,
            "t_start": self.t_start,
            "t_end": self.last_t,
            "interval": self.interval,
            "lib": self.lib,
            "keys": [list(k) for k in keys],
            "lines": lines,
            "stacks": {str(sid): ks for sid, ks in stacks_used.items()},
            "peak": {
                "rss": self.max_rss,
                "t": self.peak_t,
                "retained": [[sid, b] for sid, b in self.peak_retained.items() if b > 0],
            },
            "retained": [[sid, b] for sid, b in self.retained.items() if b > 0],
            "series": series,
            "imports": self.imports,
        }

    def flush(self) -> None:
        started = self.clock()
        path = os.path.join(self.directory, f"lines.{self.pid}.json")
        try:
            parts: list[str] = []
            _dump(self.to_dict(), parts)
            tmp = path + ".tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            try:
                data = "".join(parts).encode("ascii")
                while data:
                    data = data[os.write(fd, data) :]
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except Exception:
            # the directory is gone (memgauge ended before this process), or anything else: the
            # sampler stops, the program goes on
            self.stopped = True
        now = self.clock()
        self.flush_every = max(FLUSH_SECONDS, (now - started) / FLUSH_SHARE)
        self.last_flush = now

    # --- the thread ------------------------------------------------------------------------
    def run(self) -> None:
        try:
            self._loop()
        except Exception:
            self.stopped = True  # never into the program: its output stays its own
        finally:
            self.done.release()

    def _loop(self) -> None:
        self.own_ident = threading.get_ident()
        self.own_clock = _cpu_clock(threading.get_native_id())
        self.own_cpu_ns = time.clock_gettime_ns(self.own_clock)
        interval = self.interval
        clock = self.clock
        try:
            # the sampler's own wait for a CPU, so that only its wait for the GIL counts as lateness
            delay_fd = os.open(
                f"/proc/self/task/{threading.get_native_id()}/schedstat", os.O_RDONLY | os.O_CLOEXEC
            )
        except OSError:
            delay_fd = -1
        try:
            delay = self._run_delay(delay_fd)
            while not self.stopped:
                before = clock()
                self.wake.acquire(timeout=interval)  # time.sleep(interval) that stop() can end
                if self.stopped:
                    break
                lateness = clock() - before - interval
                if delay_fd >= 0:
                    now = self._run_delay(delay_fd)
                    lateness -= (now - delay) / 1e9
                    delay = now
                self.sample(lateness)
                if self.last_t - self.last_flush >= self.flush_every:
                    self.flush()
        finally:
            # a sampler started once per block (memgauge.profile(lines=True) in a test session)
            # must not leave a descriptor behind each time
            if delay_fd >= 0:
                os.close(delay_fd)

    @staticmethod
    def _run_delay(fd: int) -> int:
        try:
            return int(os.pread(fd, 128, 0).split()[1])
        except (OSError, ValueError, IndexError):
            return 0

    def stop(self) -> None:
        """Final sample and write, from the exiting thread, once the sampler thread is done: a
        sample of its own still running (it may let go of the GIL) would come after the write.
        Then the files it kept open are closed. Idempotent."""
        if self.closed or os.getpid() != self.pid:  # a fork child inherits the parent's atexit
            return
        final = not self.stopped  # stopped already: stop() ran, or a write failed
        self.stopped = True
        if self.wake.locked():
            try:  # noqa: SIM105 - no contextlib in the measured process
                self.wake.release()
            except RuntimeError:  # released meanwhile by another stop()
                pass
        finished = False
        if threading.get_ident() != self.own_ident and self.done.acquire(timeout=1.0):
            self.done.release()
            finished = True
        if final:
            self.sample()
            self.flush()
        if finished:
            # only once the thread is gone: a descriptor closed under a running sampler could be
            # reused by the program's next open(), and the sampler would read the program's file
            self.close()

    def close(self) -> None:
        self.closed = True
        fds = [self.statm, self.status, *(state.stat_fd for state in self.threads.values())]
        self.statm = self.status = -1
        for state in self.threads.values():
            state.stat_fd = -1
        self.stat_fds = 0
        for fd in fds:
            if fd >= 0:
                try:  # noqa: SIM105 - no contextlib in the measured process (see the module's doc)
                    os.close(fd)
                except OSError:
                    pass


_active: Sampler | None = None


def active_sampler() -> Sampler | None:
    """The sampler running in this process; None once it stopped (a new one may then start)."""
    if _active is None or _active.pid != os.getpid() or _active.stopped:
        return None
    return _active


def start_sampler(directory: str, *, lib: bool = False, base_key: Key = STARTUP_KEY) -> Sampler | None:
    """Start sampling this process: idempotent while a sampler runs; after its ``stop()`` a new one
    starts (``memgauge.profile(lines=True)`` once per block). Never raises into the program."""
    global _active
    if active_sampler() is not None:
        return _active
    try:
        sampler = Sampler(directory, lib=lib, base_key=base_key)
    except OSError:
        return None
    _active = sampler
    # A plain thread, not a threading.Thread: the program's threading.enumerate() and active_count()
    # stay what they are without memgauge. It blocks every signal (it inherits the mask it starts
    # with): a process-wide signal the program blocks in its own threads to wait for it
    # (sigtimedwait, signalfd) would otherwise be delivered to it, and kill the process.
    sampler.done.acquire()
    blocked = _signal.pthread_sigmask(_signal.SIG_BLOCK, _signal.valid_signals())
    try:
        _thread.start_new_thread(sampler.run, ())
    except RuntimeError:
        sampler.done.release()
        _active = None
        return None
    finally:
        _signal.pthread_sigmask(_signal.SIG_SETMASK, blocked)
    _install_hooks()
    return sampler


_hooks = False


def _install_hooks() -> None:
    """Once per process (a fork child inherits them, and the flag): samplers started again and
    again must not pile up atexit and at-fork handlers, which cannot be taken back."""
    global _hooks
    if _hooks:
        return
    _hooks = True
    import atexit

    atexit.register(_stop_active)
    os.register_at_fork(after_in_child=_after_fork)
    _wrap_exit()


def _stop_active() -> None:
    sampler = active_sampler()
    if sampler is not None:
        sampler.stop()


def _after_fork() -> None:
    parent = _active
    if parent is None or parent.stopped or forked_to_exec():
        return
    start_sampler(parent.directory, lib=parent.lib, base_key=INHERITED_KEY)


_real_exit: Callable[[int], NoReturn] | None = None


def _exit(status: int) -> NoReturn:
    # multiprocessing's fork children leave through os._exit, past atexit (and multiprocessing
    # clears its own finalizers after the fork hooks ran)
    assert _real_exit is not None
    if not isinstance(status, int):
        _real_exit(status)  # the TypeError the program would get, with the sampler still running
    sampler = active_sampler()
    if sampler is not None:
        sampler.stop()
    _real_exit(status)


def _wrap_exit() -> None:
    global _real_exit
    if _real_exit is None:
        _real_exit = os._exit
        os._exit = _exit


def start_from_env() -> Sampler | None:
    mode = os.environ.get(ENV_LINES, "")
    directory = os.environ.get(ENV_EVENTS_DIR, "")
    if not mode or not directory:
        return None
    return start_sampler(directory, lib=mode == "lib")
