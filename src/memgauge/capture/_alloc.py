"""Heap allocation tracking with memray, inside the measured process (``memgauge run --alloc``).

Each tracked process writes ``alloc.<pid>.bin`` (a memray capture) and ``alloc.<pid>.json`` (its
resident size when tracking began) into the events directory, as the wire format (``_wire``) says.
memray runs in its aggregated format: the process keeps per-line totals at its allocation peak in
memory and writes them once, when the tracker stops, rather than streaming every allocation to a
file that grows for as long as the program runs. A process that dies before its tracker stops
(SIGKILL, the OOM killer) therefore leaves no readable capture.

The tracker is entered from a short-lived thread: memray drops, from every later stack of the
thread that entered it, as many outermost frames as that thread had then. Entered from the
``sitecustomize`` a subprocess imports at start-up, that would cut off the program's own outermost
frames; the helper thread takes the cut instead.

A forked child gets a fresh tracker and file of its own, started the same way. The parent's tracker
is unusable there (memray abandons it in the child), and memray's ``follow_fork`` would enter the
child's tracker on the forking thread, cutting the frames above the fork. Children of
``multiprocessing`` end with ``os._exit``, which runs neither ``atexit`` nor memray's own teardown,
so ``os._exit`` is wrapped to stop the tracker first.

Nothing here may raise into the program: any failure leaves that process untracked.
"""

from __future__ import annotations

import os

from memgauge.capture._wire import ALLOC_BASELINE, ALLOC_CAPTURE, VERSION, WIRE_VERSION, file_name

# not `from typing import ...`: importing typing costs the measured process ~8 ms
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn


_directory = ""
# the process that owns _tracker: a forked child inherits both until its fork hook runs
_pid = -1
_tracker: Any = None
_real_exit: Any = None
_hooks_installed = False


def start(directory: str) -> None:
    """Track this process's heap allocations until it exits. Idempotent; never raises."""
    global _directory, _pid, _tracker
    pid = os.getpid()
    if _pid == pid:
        return
    _pid = pid
    try:
        tracker = _enter(os.path.join(directory, file_name(ALLOC_CAPTURE, pid)))
    except Exception:
        return
    if tracker is None:
        return
    _directory, _tracker = directory, tracker
    try:
        _write_baseline(pid)
        _install_hooks()
    except Exception:
        pass


def _enter(path: str) -> Any:
    """A started memray tracker writing ``path``, or None."""
    # memray imports contextlib and threading itself
    import contextlib
    import threading

    import memray

    tracker = memray.Tracker(
        destination=memray.FileDestination(path, overwrite=True, compress_on_exit=False),
        # Python stacks only: unwinding native stacks costs on every allocation
        native_traces=False,
        file_format=memray.FileFormat.AGGREGATED_ALLOCATIONS,
    )
    entered: list[bool] = []

    def enter() -> None:
        try:
            tracker.__enter__()
            entered.append(True)
        except Exception:
            pass

    # memray's own background thread inherits the signal mask of the thread that entered the
    # tracker: both block every signal, as the sampler does (see _sampler.start_sampler)
    import signal as _signal  # memray imports it anyway

    blocked = _signal.pthread_sigmask(_signal.SIG_BLOCK, _signal.valid_signals())
    try:
        thread = threading.Thread(target=enter, name="memgauge-alloc")
        thread.start()
    finally:
        _signal.pthread_sigmask(_signal.SIG_SETMASK, blocked)
    thread.join()
    if not entered:
        # memray opened the file when the tracker was made: leave no empty capture behind
        with contextlib.suppress(OSError):
            os.unlink(path)
        return None
    return tracker


def _resident_bytes() -> int:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _write_baseline(pid: int) -> None:
    import json
    import time

    data = {VERSION: WIRE_VERSION, "baseline": _resident_bytes(), "t": time.monotonic()}
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
    fd = os.open(os.path.join(_directory, file_name(ALLOC_BASELINE, pid)), flags, 0o600)
    try:
        os.write(fd, json.dumps(data).encode())
    finally:
        os.close(fd)


def _install_hooks() -> None:
    global _hooks_installed, _real_exit
    if _hooks_installed:
        return
    import atexit

    atexit.register(stop)
    os.register_at_fork(after_in_child=_after_fork_in_child)
    _real_exit = os._exit
    os._exit = _exit
    _hooks_installed = True


def stop() -> None:
    """Stop tracking and write this process's capture. Never raises."""
    global _tracker
    tracker, _tracker = _tracker, None
    if tracker is None or _pid != os.getpid():
        return
    import contextlib

    with contextlib.suppress(Exception):
        tracker.__exit__(None, None, None)


def _exit(status: int) -> NoReturn:
    if isinstance(status, int):  # else the TypeError the program would get, still tracking
        stop()
    _real_exit(status)
    raise AssertionError("os._exit returned")  # pragma: no cover


def _after_fork_in_child() -> None:
    global _tracker
    inherited, _tracker = _tracker, None
    if inherited is None:
        return
    from memgauge.capture._frames import forked_to_exec

    if forked_to_exec():
        return  # subprocess's fork: it execs, and the program it runs starts its own tracker
    try:
        # memray already abandoned this tracker in the child; exiting it undoes the Python-side
        # set-up (profile functions, threading patches) that would stop a new one from entering
        inherited.__exit__(None, None, None)
    except Exception:
        return
    start(_directory)
