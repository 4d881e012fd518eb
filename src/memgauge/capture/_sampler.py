"""Line sampling inside a measured Python process.

A thread of its own (started with ``_thread``, invisible to ``threading``, blocking every signal)
wakes every ``interval`` and, holding the GIL, reads every Python thread's stack
(``sys._current_frames``), every thread's CPU clock, the process's CPU clock and its resident size.
Between two samples:

* each thread's CPU time goes to the line it is on, as *native* when the thread can run without the
  GIL (it is on a CPU while the sampler holds the GIL: C code that released it: numpy, BLAS, torch)
  or when the GIL came back only long after it was asked for (C code that kept it), else as
  *Python*; of the rest of the interval, the time it was runnable but queued for a CPU (its
  schedstat run delay) is *contention*, what is left *waiting* (I/O, sleep, locks, the GIL);
* CPU time of threads without Python frames (BLAS and OpenMP pools) is native time of the lines
  running native code meanwhile, else of the pseudo-line ``<native>``;
* the change of resident memory goes to the lines of the threads that ran, in proportion to their
  CPU time; the ledger (``_ledger``) keeps, last in first out, which lines' growth is still
  resident, so the ledger at the highest sample says which lines hold the process's peak.

Everything is aggregated here: memory use does not grow with run time. The aggregate is written as
``lines.<pid>.json`` (``_lines_write``) in the events directory every few seconds and at exit, so a
killed process loses at most the last few seconds. The stacks are read by ``_frames.StackReader``,
each thread's CPU clock and run state by ``_procfs.OwnThreads``; ``_sampling`` starts and stops the
sampler of a process. Plain classes, and only small modules (``os``, ``sys``, ``time``, the C
module ``_thread``, and ``_json`` for the file): this module is imported into every measured process.
"""

from __future__ import annotations

import _thread
import os
import sys
import time

from memgauge.capture._bytecode import stalled_keys
from memgauge.capture._frames import LIBRARY, USER, StackReader
from memgauge.capture._ledger import Ledger
from memgauge.capture._line_times import LineTimes
from memgauge.capture._lines_write import lines_record, write_lines
from memgauge.capture._procfs import OwnThreads, main_thread, thread_cpu_clock
from memgauge.capture._sample_keys import INHERITED_KEY, STARTUP_KEY
from memgauge.capture._sampler_charge import STATS, charge_cpu, charge_memory, stalled_peak
from memgauge.capture._sched import RunDelays, off_cpu_in_syscall, run_delay
from memgauge.capture._wire import CPU_NATIVE, CPU_PYTHON

TYPE_CHECKING = False
if TYPE_CHECKING:
    import threading
    from collections.abc import Callable
    from typing import Any

    from memgauge.capture._frames import Position
    from memgauge.capture._sampler_charge import Key, Seen

INTERVAL = 0.01
# the aggregate is written at most every FLUSH_SECONDS, and at most 2% of the time (a process
# killed by a signal, a pool worker terminated, keeps what was last written)
FLUSH_SECONDS = 0.5
FLUSH_SHARE = 0.02
# a new peak is written at once (not FLUSH_SECONDS later) once it is this much above the last peak
# written, or, once the process has come down from it, 5% above: a pool worker that builds an
# array, returns and is terminated within FLUSH_SECONDS must leave its peak's lines (issue 16).
# Each such write raises the written peak by a factor, so their number stays logarithmic.
PEAK_RISE = 1.25
PEAK_PASSED = 1.05
_PAGE = os.sysconf("SC_PAGE_SIZE")


class Sampler:
    """The aggregate (``lines``) and the ledger, fed by :meth:`sample`. ``clock`` and the readers
    are injectable so tests can drive it step by step."""

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
        self.frames = StackReader(lib)
        # key -> the statistics of _wire.LINE_STATS (CPU_PYTHON, CPU_NATIVE, WAIT, GROWTH, SAMPLES),
        # then CONTENTION (the lines record's optional "contention")
        self.lines: dict[Key, list[float]] = {}
        self.ledger = Ledger()
        self.times = LineTimes()  # the main thread's line over time, for GPU time per line
        self.threads = OwnThreads()
        self.delays = RunDelays()
        self.statm = os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC)
        self.status = -1
        self.t_start = clock()
        self.rss = self.resident()
        self.max_rss, self.peak_t = self.rss, self.t_start
        self.cpu_ns = time.process_time_ns()
        self.last_t = self.t_start
        self.base_sid = self.ledger.stack_id((base_key,))
        self.ledger.credit(self.base_sid, self.rss, self.t_start)
        self.peak_retained = dict(self.ledger.retained)
        self.last_grown: list[tuple[list[Key], float]] = []  # the last growth's lines, by share
        self.own_ident, self.own_cpu_ns = -1, 0
        self.own_clock: int | None = None  # its thread's CPU clock: a negative id, once it runs
        # rows of _wire.IMPORT_ROW, appended by the import tracker (_imports)
        self.imports: list[list[Any]] = []
        self.stopped, self.closed = False, False
        # set by the bootstrap as it starts the program, and ``program_done`` once its code returned
        self.program_key: Key = base_key
        self.program_done = False
        # the main thread's CPU clock when the program's code returned (``program_returned``), and its
        # keys and kind when last seen on it: the stretch to the return is charged to them (``_tail``)
        self.returned_cpu_ns = -1
        self.last_main: tuple[list[Key], bool] | None = None
        # the process is memgauge's bootstrap (``python .../memgauge/capture/_launch.py``): until it
        # names the program, the main thread runs start-up
        self.bootstrap = False
        # threads whose Thread object holds a stale native_id: the thread that forked, in the child
        self.main_ident, main_tid = main_thread()
        self.native_ids: dict[int, int] = {} if main_tid is None else {_thread.get_ident(): main_tid}
        if base_key is INHERITED_KEY:
            # the thread that forked keeps its Thread object, whose native_id is the parent's
            self.native_ids[_thread.get_ident()] = _thread.get_native_id()
        self.done = _thread.allocate_lock()  # held while the sampler thread runs
        # the thread waits on it between samples, held, so that stop() wakes it at once instead
        # of after up to an interval (a sampler stopped once per test: 10 ms a test)
        self.wake = _thread.allocate_lock()
        self.wake.acquire()
        self.last_flush = self.t_start
        self.flush_min = self.flush_every = FLUSH_SECONDS  # flush_min: raised in a loop's steady steps
        self.flushed_peak = self.max_rss

    # --- readers ---------------------------------------------------------------------------
    def resident(self) -> int:
        try:
            return int(os.pread(self.statm, 64, 0).split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            return 0

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
        stacks = self.frames.stacks(self.own_ident)
        rss = self.resident()
        active: dict[int, threading.Thread] = getattr(sys.modules.get("threading"), "_active", {})  # no copy
        spent = self._spent()
        # How long the GIL took to come back tells who had it: at once, nobody (threads on a CPU
        # run C code that released it); after about the switch interval, Python code (it had
        # to be asked to let go); much later, C code that kept it.
        switch = sys.getswitchinterval()  # the program may change it
        gil_free = lateness < switch / 2
        held_long = lateness > 2 * switch + 0.005
        # one Seen per Python thread, the main thread first: it gets what belongs to no thread
        seen: list[Seen] = []
        stall: list[Key] | None = None
        python_cpu = self._tail(active)
        alive: set[int] = set()
        main_keys = self._main_user_keys(stacks)
        for ident, own_keys, own_position in stacks:
            keys, position = own_keys, own_position
            if ident == self.main_ident:
                keys, position = self._outside_program(keys, position)
                if not keys:
                    continue  # memgauge's start-up: as its own frames, not seen
            tid = self._native_id(ident, active)
            one: Seen = (keys, 0.0, False, None, 0.0)
            if tid is not None:
                alive.add(tid)
                one, stalled = self._thread(tid, keys, position, wall_ns, main_keys, gil_free, held_long)
                python_cpu += one[1]
                stall = one[0] if stalled else stall
            if ident == self.main_ident:
                seen.insert(0, one)
                if one[0][0] != self.program_key:
                    self.last_main = (one[0], one[2])
            else:
                seen.append(one)
        self.threads.keep(alive)
        self.delays.keep(alive)
        self.times.add(t, wall, stacks, self.main_ident)
        if seen:
            # CPU of threads without Python frames (BLAS, OpenMP): native time of the lines that
            # run native code now, else of no line
            charge_cpu(self, seen, max(0.0, spent - python_cpu), wall_ns)
        if stall is not None:
            stalled_peak(self, t, stall)
        charge_memory(self, t, rss, seen)

    def _spent(self) -> int:
        """The process's CPU time since the last sample, less the sampler thread's own (no line's)."""
        cpu_total = time.process_time_ns()
        spent = cpu_total - self.cpu_ns
        self.cpu_ns = cpu_total
        if self.own_clock is not None:
            try:
                own = time.clock_gettime_ns(self.own_clock)
            except OSError:
                own = self.own_cpu_ns
            spent -= own - self.own_cpu_ns
            self.own_cpu_ns = own
        return spent

    def _main_user_keys(self, stacks: list[tuple[int, list[Key], Position]]) -> list[Key] | None:
        """The main thread's user line: what a busy library thread with no user frame of its own (a
        pool's worker: pandas reading a CSV, a ThreadPoolExecutor running a library call) is
        charged to, as the line that most likely waits for it."""
        main_keys = next((k for i, k, _ in stacks if i == self.main_ident), None)
        if main_keys is not None and (self.lib or self.frames.kind(main_keys[0][0]) != USER):
            return None
        return main_keys

    def _thread(
        self,
        tid: int,
        keys: list[Key],
        position: Position,
        wall_ns: float,
        main_keys: list[Key] | None,
        gil_free: bool,
        held_long: bool,
    ) -> tuple[Seen, bool]:
        """One Python thread's share of a sample, and whether it held the GIL through it (stalled)."""
        state = self.threads.state(tid)
        cpu = state.cpu_since(wall_ns)
        queued = float(min(self.delays.delta(tid), max(wall_ns - cpu, 0.0)))
        if cpu <= 0:
            return (keys, cpu, False, None, queued), False
        if main_keys is not None and self.frames.kind(keys[0][0]) == LIBRARY:
            keys, position = list(main_keys), None
        # the GIL holder ran for a good part of the wait, even on a busy machine
        stalled = held_long and cpu > wall_ns / 4
        # with the GIL free, a thread that is not on a CPU now (sleeping, reading) spent its CPU
        # time before it blocked: in Python, most likely
        running = gil_free and self.threads.running(state, tid)
        blocked = None
        # blocked in a call now: its growth was made before (``_bytecode.blocked_line``)
        if not running and (gil_free or (not stalled and off_cpu_in_syscall(tid))):
            blocked = position
        if stalled and position is not None:
            stalled_keys(keys, position)
        return (keys, cpu, stalled or running, blocked, queued), stalled

    def _outside_program(self, keys: list[Key], position: Position) -> tuple[list[Key], Position]:
        """What the main thread's stack stands for before and after the program's own code."""
        if self.program_done and self.frames.kind(keys[0][0]) != USER:
            return [self.program_key], None  # its code returned: shutdown is not a line
        if (
            self.bootstrap
            and self.program_key == STARTUP_KEY
            and all(self.frames.kind(k[0]) != USER for k in keys)
        ):
            # site loading what it loads before the bootstrap's first frame is on the stack: the
            # library frames seen then are memgauge's start-up, not the program's. Not seen, as
            # memgauge's own frames: a line of ``<startup>`` would count as the program's first
            # (``charge_memory``), and a script over before the next sample lost its bytes
            return [], None
        return keys, position

    def _native_id(self, ident: int, active: dict[int, threading.Thread]) -> int | None:
        tid = self.native_ids.get(ident)
        if tid is None:
            thread = active.get(ident)
            tid = getattr(thread, "native_id", None) if thread is not None else None
        return tid

    def program_returned(self) -> None:
        """Called by the main thread as the program's code returns: its CPU time since the last
        sample that saw it is the program's, though no later sample sees its line (the exit
        handlers run memgauge's frames); left out, up to an interval was lost (``_tail``)."""
        self.returned_cpu_ns = time.thread_time_ns()
        self.program_done = True

    def _tail(self, active: dict[int, threading.Thread]) -> float:
        """The main thread's CPU time from its last read to the program's return, charged to the
        line the last sample saw it on, in ns (0.0 once charged). What it ran after the return
        is read as any thread's, later."""
        mark, last = self.returned_cpu_ns, self.last_main
        if mark < 0 or last is None or self.main_ident is None:
            return 0.0
        tid = self._native_id(self.main_ident, active)
        self.returned_cpu_ns = -1
        cpu = self.threads.state(tid).cpu_until(mark) if tid is not None else 0.0
        keys, native = last
        stats = self.lines.get(keys[0])
        if stats is None:
            stats = self.lines[keys[0]] = [0.0] * STATS
        stats[CPU_NATIVE if native else CPU_PYTHON] += cpu / 1e9
        return cpu

    # --- output ----------------------------------------------------------------------------
    def _peak_unwritten(self) -> bool:
        return self.max_rss >= PEAK_RISE * self.flushed_peak or (
            self.rss < self.max_rss and self.max_rss >= PEAK_PASSED * self.flushed_peak
        )

    def flush(self) -> None:
        started = self.clock()
        self.flushed_peak = self.max_rss
        try:
            write_lines(self.directory, self.pid, lines_record(self))
        except Exception:
            # the directory is gone (memgauge ended before this process), or anything else: the
            # sampler stops, the program goes on
            self.stopped = True
        now = self.clock()
        self.flush_every = max(self.flush_min, (now - started) / FLUSH_SHARE)
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
        self.own_ident = _thread.get_ident()
        self.own_clock = thread_cpu_clock(_thread.get_native_id())
        self.own_cpu_ns = time.clock_gettime_ns(self.own_clock)
        clock = self.clock
        try:
            # the sampler's own wait for a CPU, so that only its wait for the GIL counts as lateness
            delay_fd = os.open(
                f"/proc/self/task/{_thread.get_native_id()}/schedstat", os.O_RDONLY | os.O_CLOEXEC
            )
        except OSError:
            delay_fd = -1
        try:
            delay = run_delay(delay_fd)
            while not self.stopped:
                interval = self.interval  # slowed once a training loop is steady (``_sampling``)
                before = clock()
                self.wake.acquire(timeout=interval)  # time.sleep(interval) that stop() can end
                if self.stopped:
                    break
                lateness = clock() - before - interval
                if delay_fd >= 0:
                    now = run_delay(delay_fd)
                    lateness -= (now - delay) / 1e9
                    delay = now
                self.sample(lateness)
                if self.last_t - self.last_flush >= self.flush_every or self._peak_unwritten():
                    self.flush()
        finally:
            # a sampler started once per block (memgauge.profile(lines=True) in a test session)
            # must not leave a descriptor behind each time
            if delay_fd >= 0:
                os.close(delay_fd)

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
        if _thread.get_ident() != self.own_ident and self.done.acquire(timeout=1.0):
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
        fds = [self.statm, self.status]
        self.statm = self.status = -1
        self.threads.close()
        self.delays.close()
        for fd in fds:
            if fd >= 0:
                try:  # noqa: SIM105 - no contextlib in the measured process (see the module's doc)
                    os.close(fd)
                except OSError:
                    pass
