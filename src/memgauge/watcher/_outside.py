"""Line samples read from outside the measured processes: py-spy reads every Python thread's stack
from the process's memory, without its GIL, so a line that is one long C call holding the GIL
(``[2] * n``, ``pickle.loads``, ``bytes(n)``) is seen running, which a sampling thread inside the
process never is.

``OutsideLines`` runs in the runner, beside the program: it starts ``py-spy record`` (chrome trace
format: each thread's stack over time, with line numbers; ``-s`` follows the program's Python
children, ``--idle`` keeps the stacks of threads off a CPU, ``--threads`` names each thread's native
id; its process is made before the program's, as a shell that reads the program's pid and then
becomes py-spy, so that the watcher never takes it for the program's) once the first Python
process of the run has announced itself (``capture``'s ``OUTSIDE_MARK``),
and says to it when py-spy reads it (``ATTACHED_MARK``): the program waits for that before its first
line. Its own thread polls, every ``interval``, each process's resident size and each thread's CPU
and run-queue time (``schedstat``). Once the program ended, ``finish`` joins the two series into
each process's ``lines.<pid>.json`` (``capture.join_outside_lines``), where the in-process sampler
would have written it.

Where py-spy may not read the program (``outside_refusal()``: Yama's ``ptrace_scope``, no
``CAP_SYS_PTRACE``, Python 3.10, no py-spy) or fails to attach (the runner writes ``INSIDE_MARK``),
each process samples itself as before."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time

from memgauge.capture import ATTACHED_MARK, INSIDE_MARK, OUTSIDE_MARK
from memgauge.watcher._descendants import read_all_children
from memgauge.watcher._outside_poll import ProcessPoller

TYPE_CHECKING = False  # not typing's: a run imports no typing before the program (docs/benchmarks.md)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# py-spy's samples per second: 10 ms, the in-process sampler's interval
RATE = 100
# polls of /proc kept per process before the interval doubles (bounded memory on long runs)
POLLS_BEFORE_SLOWER = 6000
STOP_WAIT = 5.0
_CAP_SYS_PTRACE = 19
TRACE_FILE = "outside.trace.json"
OLD_PYTHON = "Python before 3.11: py-spy sees no native thread ids"

Key = tuple[str, int, str]


def py_spy_path() -> str | None:
    """The py-spy binary: the wheel installs it beside this interpreter's scripts."""
    beside = os.path.join(os.path.dirname(sys.executable), "py-spy")
    if os.access(beside, os.X_OK):
        return beside
    # where it is installed apart (a system package): shutil's imports (zlib, bz2, lzma: ~2 ms)
    # only then, before the program's first line
    import shutil

    return shutil.which("py-spy")


def _has_cap_ptrace() -> bool:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    return bool(int(line.split()[1], 16) >> _CAP_SYS_PTRACE & 1)
    except (OSError, ValueError):
        pass
    return False


def outside_refusal(scope_file: str = "/proc/sys/kernel/yama/ptrace_scope") -> str | None:
    """Why py-spy, a child of this process, may not read the program (its sibling); None when it
    may. Yama 1 lets a process read only its descendants, 2 needs CAP_SYS_PTRACE, 3 forbids it.
    Before 3.11 py-spy names a thread by its pthread handle alone, which the join cannot match
    with the thread's CPU counters by native id: no line would be charged."""
    try:
        with open(scope_file) as f:
            scope = int(f.read().strip() or 0)
    except (OSError, ValueError):
        scope = 0  # no Yama: same uid is enough
    if scope >= 3:
        return "Yama ptrace_scope 3 forbids reading another process"
    if scope >= 1 and not _has_cap_ptrace():
        return f"Yama ptrace_scope {scope} and no CAP_SYS_PTRACE"
    if sys.version_info < (3, 11):
        return OLD_PYTHON
    if py_spy_path() is None:
        return "py-spy is not installed"
    return None


class OutsideLines:
    """py-spy and the /proc poller of one run: made before the program is spawned (py-spy's shell
    then waits for its pid), ``start()`` once it is, ``finish()`` once it ended."""

    def __init__(
        self,
        events_dir: str,
        *,
        lib: bool,
        interval: float = 0.01,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.events_dir, self.lib, self.interval, self.clock = events_dir, lib, interval, clock
        self.root = 0
        self.polls: dict[int, list[tuple[float, int, dict[int, tuple[int, int, bool]]]]] = {}
        # per process, VmHWM at each poll where the resident size came down: it may have peaked
        # between two polls (a C call's buffer built and freed within 10 ms of each other)
        self.peaks: dict[int, dict[float, int]] = {}
        self.proc: subprocess.Popen[bytes] | None = None
        self.launched = False
        self.pollers: dict[int, ProcessPoller] = {}
        self.origin = 0.0
        self.failure: str | None = None
        self.attached = False
        self.cpu_seconds: float | None = None  # py-spy's, once it was reaped here
        self.announced: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memgauge-outside-lines", daemon=True)
        self._spawn_waiting()

    def start(self, root: int, *, python: bool) -> None:
        """Follow the program whose first process is ``root``. ``python``: the root is this
        interpreter, exec'd already: py-spy starts at once, attaching while the interpreter
        starts, instead of after it announced itself (~0.1 s less of the program's wait)."""
        self.root = root
        if python:
            self.announced.add(root)
        self._thread.start()

    # --- the poller ---------------------------------------------------------------------------
    def _run(self) -> None:
        interval = self.interval
        if self.announced:
            self._launch_when_announced()
        while not self._stop.wait(interval):
            if not self.launched and self.failure is None:
                self._launch_when_announced()
            self.poll()
            if (
                max((len(p) for p in self.polls.values()), default=0)
                > POLLS_BEFORE_SLOWER * interval / self.interval
            ):
                interval *= 2

    def poll(self) -> None:
        pids, todo = [], [self.root]
        while todo:
            pid = todo.pop()
            pids.append(pid)
            todo.extend(read_all_children(pid))
        for pid in pids:
            poller = self.pollers.get(pid)
            if poller is None:
                try:
                    poller = self.pollers[pid] = ProcessPoller(pid)
                except OSError:
                    continue
            # the time of each process's own reading: on a busy machine the walk above, or the
            # processes before it, can take milliseconds
            t = self.clock()
            got = poller.poll()
            if got is None:
                poller.close()
                del self.pollers[pid]
                continue
            polls = self.polls.setdefault(pid, [])
            if polls and got[0] < polls[-1][1]:
                hwm = poller.high_water()
                if hwm > polls[-1][1]:
                    self.peaks.setdefault(pid, {})[t] = hwm
            polls.append((t, got[0], got[1]))

    def _spawn_waiting(self) -> None:
        """py-spy's process, made before the program's: a shell that waits for the program's pid
        on its stdin, then becomes py-spy. Its pid is known before the watcher's first sample,
        which leaves it out of the program's tree (memgauge's children are the tree where no
        cgroup holds it)."""
        binary = py_spy_path()
        if binary is None:
            self._fail("py-spy is not installed")
            return
        record = ["record", "--nonblocking", "--idle", "--threads", "--subprocesses", "--rate", str(RATE)]
        record += ["--format", "chrometrace", "--output", self.trace_path]
        script = 'read -r pid || exit 0; exec "$0" "$@" --pid "$pid" </dev/null'
        try:
            self._stderr = open(os.path.join(self.events_dir, "outside.stderr"), "w+b")  # noqa: SIM115 - py-spy's, closed in stop()
            self.proc = subprocess.Popen(
                ["/bin/sh", "-c", script, binary, *record],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                # to a file, not a pipe nobody reads while it runs: warnings could fill it and stall py-spy
                stderr=self._stderr,
                start_new_session=True,  # a terminal's Ctrl-C is the program's, not py-spy's
                # the runner's threads block the signals its main thread waits for, and py-spy
                # would inherit that mask: its SIGINT (stop and write the trace) would never come
                preexec_fn=_unblock_signals,  # noqa: PLW1509 - only a sigmask call, no lock taken
            )
        except OSError as e:
            self._fail(f"py-spy did not start ({e.strerror or e})")

    def _launch_when_announced(self) -> None:
        try:
            self.announced.update(_marked(os.listdir(self.events_dir)))
        except OSError:
            return
        proc = self.proc
        if not self.announced or proc is None or proc.stdin is None:
            return
        self.origin = self.clock()
        try:
            proc.stdin.write(f"{self.root}\n".encode())
            proc.stdin.close()
        except OSError as e:
            self._fail(f"py-spy did not start ({e.strerror or e})")
            return
        self.launched = True
        threading.Thread(target=self._watch_output, daemon=True).start()

    @property
    def trace_path(self) -> str:
        return os.path.join(self.events_dir, TRACE_FILE)

    def _watch_output(self) -> None:
        """py-spy prints a line once it reads the program; it exits with an error when it cannot."""
        proc = self.proc
        assert proc is not None and proc.stdout is not None
        for raw in proc.stdout:
            if b"Sampling process" in raw:
                self.attached = True
                self._mark_attached()
                break
        else:
            proc.wait()
            self._stderr.seek(0)
            err = self._stderr.read().decode(errors="replace")
            first = next((line for line in err.splitlines() if line.strip()), "no output")
            self._fail(f"py-spy could not read the program: {first.strip()}")
            return
        for _ in proc.stdout:  # drained, so py-spy never blocks on a full pipe
            pass

    def _mark_attached(self) -> None:
        for pid in list(self.announced):
            with contextlib.suppress(OSError):
                open(os.path.join(self.events_dir, f"{ATTACHED_MARK}{pid}"), "w").close()

    def _fail(self, why: str) -> None:
        self.failure = why
        with contextlib.suppress(OSError):
            open(os.path.join(self.events_dir, INSIDE_MARK), "w").close()
        self._mark_attached()

    # --- the end ------------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop polling and py-spy (it writes its trace as it stops)."""
        self._stop.set()
        if self._thread.ident is not None:  # started
            self._thread.join(timeout=STOP_WAIT)
        if not self._thread.is_alive():
            for poller in self.pollers.values():
                poller.close()
            self.pollers.clear()
        proc = self.proc
        if proc is not None and proc.returncode is None:
            if not self.launched and proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()  # never told a pid: the shell exits
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGINT)
            if not self._reap(proc, STOP_WAIT):
                proc.kill()
                self._reap(proc, STOP_WAIT)
        if proc is not None:
            self._stderr.close()

    def _reap(self, proc: subprocess.Popen[bytes], timeout: float) -> bool:
        """Wait for py-spy to exit, with its CPU time (``cpu_seconds``: memgauge's own, for the
        profile's overhead), which ``Popen.wait`` would not keep. False on the timeout; True too
        where something else reaped it (the runner's loop: its record has the CPU time)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            except ChildProcessError:
                return True
            if pid:
                proc.returncode = os.waitstatus_to_exitcode(status)
                self.cpu_seconds = usage.ru_utime + usage.ru_stime
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    def finish(self) -> str:
        """Join the trace and the polls into each sampled process's lines file. Returns what ran,
        for the profile: ``py-spy (outside the process)`` or why each process sampled itself."""
        self.stop()
        if self.failure is not None:
            return f"in-process ({self.failure})"
        if not self.launched:
            return "in-process (no Python process announced itself)"
        # the join's modules only now: they are not the run's set-up (~25 ms where they load cold)
        import json

        from memgauge.capture import join_outside_lines

        try:
            with open(self.trace_path) as f:
                events = json.load(f)
        except (OSError, ValueError) as e:
            return f"in-process (py-spy wrote no trace: {e})"
        spans = trace_spans(events, self.origin)
        with contextlib.suppress(OSError):
            self.announced.update(_marked(os.listdir(self.events_dir)))
        # every process py-spy read: a fork child runs no start-up code and never announces itself
        for pid, threads in spans.items():
            if pid in self.polls:
                join_outside_lines(
                    self.events_dir,
                    pid,
                    self.polls.get(pid, []),
                    threads,
                    lib=self.lib,
                    interval=1 / RATE,
                    announced=pid in self.announced,
                    child=pid != self.root,
                    peaks=self.peaks.get(pid, {}),
                )
        return "py-spy (outside the process)"


def _marked(names: list[str]) -> set[int]:
    """The pids of the Python processes that announced themselves (``OUTSIDE_MARK``)."""
    n = len(OUTSIDE_MARK)
    return {int(name[n:]) for name in names if name.startswith(OUTSIDE_MARK) and name[n:].isdigit()}


def _unblock_signals() -> None:
    signal.pthread_sigmask(signal.SIG_SETMASK, set())


def trace_spans(
    events: list[dict[str, Any]], origin: float
) -> dict[int, dict[int, list[tuple[float, float, list[Key]]]]]:
    """py-spy's chrome trace (``B``/``E`` events per frame, outermost first, each time a thread's
    stack changed) as spans per process and native thread: (start, end, frames innermost first),
    times on the runner's monotonic clock (``origin``: when py-spy started)."""
    stacks: dict[tuple[int, int], list[tuple[str, int, str]]] = {}
    since: dict[tuple[int, int], float] = {}
    native: dict[tuple[int, int], int] = {}
    out: dict[int, dict[int, list[tuple[float, float, list[Key]]]]] = {}
    for ev in events:
        who = (int(ev["pid"]), int(ev["tid"]))
        t = origin + int(ev["ts"]) / 1e6
        stack = stacks.setdefault(who, [])
        if t != since.get(who) and who in since:
            frames = [f for f in stack if f[0]]
            if frames and who in native:
                span = (since[who], t, list(reversed(frames)))
                out.setdefault(who[0], {}).setdefault(native[who], []).append(span)
        since[who] = t
        args = ev.get("args") or {}
        name = str(ev.get("name", ""))
        if ev.get("ph") == "B":
            stack.append((str(args.get("filename") or ""), int(args.get("line") or 0), name))
            if name.startswith("thread (") and who not in native:
                with contextlib.suppress(ValueError):
                    native[who] = int(name[len("thread (") :].split(")", maxsplit=1)[0])
        elif stack:
            stack.pop()
    return out
