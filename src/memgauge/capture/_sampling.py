"""Starting and stopping the line sampler of this process (``_sampler``): one at a time, started
again in a forked child, stopped (its last sample written) at exit, by ``os._exit`` too.

When the runner reads the lines from outside (``MEMGAUGE_LINES_OUTSIDE``: py-spy, ``watcher``'s
``_outside``), the sampler here is *passive*: no thread, no sample; it keeps what only the process
itself sees (the import tracker's rows, the line that started each child) and writes them at exit,
for the runner to join with the samples read from outside. The main process then announces itself
(``outside.<pid>`` in the events directory) and waits, at most ``ATTACH_WAIT`` seconds, for the
runner to say the outside sampler reads it (``attached.<pid>``): its first lines are not lost.

Imported into every measured process whose lines are sampled: standard library only.
"""

from __future__ import annotations

import _thread
import os
import sys

from memgauge._env import ENV_EVENTS_DIR, ENV_LINES, ENV_LINES_OUTSIDE
from memgauge.capture._events import bootstrap_args
from memgauge.capture._frames import forked_to_exec
from memgauge.capture._lines_write import lines_record, write_lines
from memgauge.capture._sample_keys import INHERITED_KEY, STARTUP_KEY
from memgauge.capture._sampler import Sampler
from memgauge.capture._spawns import after_fork_in_child, wrap_process_starts

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal as _signal
    from collections.abc import Callable
    from typing import NoReturn

    from memgauge.capture._sampler_charge import Key
else:
    import _signal  # signal itself imports enum: not into every measured process


_active: Sampler | None = None
# a training loop's steady steps repeat one another: sampled every STEADY_INTERVAL seconds once its
# first steps ended. A sample of torch's deep stacks takes ~260 us of the sampler's time, and each of
# its /proc reads hands the GIL to the loop and back: at 10 ms the samples took 2.5-4.5% of the
# bench loop's steps, at 40 ms 0.5-1.5% (docs/benchmarks.md); at 100 ms, still 600 samples a minute
STEADY_INTERVAL = 0.1
# and its aggregate written every STEADY_FLUSH seconds at most: a write of the bench loop's lines
# took 3-4 ms of the sampler's thread with the GIL, every 0.5 s (0.7% of the loop)
STEADY_FLUSH = 2.0


OUTSIDE_MARK = "outside."
ATTACHED_MARK = "attached."
# written by the runner when the outside sampler cannot read the program: every process samples itself
INSIDE_MARK = "outside.inside"
ATTACH_WAIT = 2.0


class PassiveSampler(Sampler):
    """A sampler without its thread: the lines are sampled from outside. It keeps the import
    tracker's rows and the children's starting lines, and writes them (no line statistics) at
    exit."""

    program_t = -1.0  # when the bootstrap started the program (its ``program_key`` set)

    def __setattr__(self, name: str, value: object) -> None:
        if name == "program_key" and "program_key" in self.__dict__:
            object.__setattr__(self, "program_t", self.clock())
        object.__setattr__(self, name, value)

    def sample(self, lateness: float = 0.0) -> None:
        self.last_t = self.clock()
        self.rss = self.resident()

    def flush(self) -> None:
        # written once, at exit. With the program's start: growth before the first stack read
        # after it is the program's (a script over before py-spy's first sample), not start-up's
        record = lines_record(self)
        if self.program_t >= 0:
            record["program"] = [*self.program_key, self.program_t]
        try:
            write_lines(self.directory, self.pid, record)
        except Exception:
            self.stopped = True  # the directory is gone: the program goes on


def active_sampler() -> Sampler | None:
    """The sampler running in this process; None once it stopped (a new one may then start)."""
    if _active is None or _active.pid != os.getpid() or _active.stopped:
        return None
    return _active


def steady_loop() -> None:
    """The program's training loop is past its first steps (``sections/training/_capture``): this process's
    sampler, if one runs, samples every ``STEADY_INTERVAL`` and writes every ``STEADY_FLUSH`` from now on
    (a new peak still at once)."""
    sampler = active_sampler()
    if sampler is not None and sampler.interval < STEADY_INTERVAL:
        sampler.interval = STEADY_INTERVAL
        sampler.flush_min = sampler.flush_every = max(sampler.flush_every, STEADY_FLUSH)


def start_sampler(
    directory: str, *, lib: bool = False, base_key: Key = STARTUP_KEY, passive: bool = False
) -> Sampler | None:
    """Start sampling this process: idempotent while a sampler runs; after its ``stop()`` a new one
    starts (``memgauge.profile(lines=True)`` once per block). ``passive``: sampled from outside
    (``PassiveSampler``). Never raises into the program."""
    global _active
    if active_sampler() is not None:
        return _active
    try:
        sampler = (PassiveSampler if passive else Sampler)(directory, lib=lib, base_key=base_key)
    except OSError:
        return None
    _active = sampler
    if passive:
        _install_hooks()
        return sampler
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
    # which line started each child: charged with a child that leaves no lines (_spawns)
    wrap_process_starts()


def _stop_active() -> None:
    sampler = active_sampler()
    if sampler is not None:
        sampler.stop()


def _after_fork() -> None:
    after_fork_in_child()
    parent = _active
    if parent is None or parent.stopped or forked_to_exec():
        return
    passive = isinstance(parent, PassiveSampler)
    start_sampler(parent.directory, lib=parent.lib, base_key=INHERITED_KEY, passive=passive)


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
    outside = os.environ.get(ENV_LINES_OUTSIDE, "")
    passive = bool(outside) and _read_from_outside(directory, outside)
    sampler = start_sampler(directory, lib=mode == "lib", passive=passive)
    if sampler is not None:
        sampler.bootstrap = bootstrap_args(list(getattr(sys, "orig_argv", []))) is not None
    return sampler


def _read_from_outside(directory: str, runner: str) -> bool:
    """Tell the runner this Python process is there. True when the outside sampler reads it: the
    main process (the runner's child) waits for that, at most ``ATTACH_WAIT``, so that a line that
    allocates at once is not lost; False (it samples itself) when the runner says the outside
    sampler cannot read the program (``INSIDE_MARK``) or did not attach in time."""
    import time

    pid = os.getpid()
    inside = os.path.join(directory, INSIDE_MARK)
    try:
        fd = os.open(os.path.join(directory, f"{OUTSIDE_MARK}{pid}"), os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC)
        os.close(fd)
    except OSError:
        return False
    if runner != str(os.getppid()):
        return not os.path.exists(inside)
    attached = os.path.join(directory, f"{ATTACHED_MARK}{pid}")
    end = time.monotonic() + ATTACH_WAIT
    while True:
        if os.path.exists(inside):
            return False
        if os.path.exists(attached):
            return True
        if time.monotonic() >= end:
            return False
        time.sleep(0.002)
