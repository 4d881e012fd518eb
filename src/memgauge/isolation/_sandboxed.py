"""The runner half of a sandboxed run, as the runner drives it (:class:`SandboxIsolation`, the
sandbox's ``Isolation``): its pieces applied (``_setup``) before the program starts, its output
watched while it runs, and afterwards nothing of it left running, nothing it planted read as root,
and the record of what held into the profile."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import subprocess
import time
from typing import TYPE_CHECKING

from memgauge._errors import InternalError
from memgauge._units import format_bytes
from memgauge.isolation._setup import SandboxSetup
from memgauge.isolation._uids import pids_of_uid

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from memgauge.isolation._protocol import HardLimits
    from memgauge.isolation._sandbox import SandboxRun
    from memgauge.model import Profile
    from memgauge.watcher import MemoryGroup

# the largest measurement file (line samples, events) of the program's that the runner reads
MAX_EVENTS_FILE_BYTES = 256 << 20
# what the runner reads of them all together: everything in them may become part of the profile
# (a process record per pid an event names, its command line as given), and reading them costs
# the runner, which no limit of the run's bounds, many times their size in memory
MAX_EVENTS_TOTAL_BYTES = 16 << 20
# the runner's own resident memory (it runs as root, outside the run's memory cgroup): a run that
# makes the measurement itself pass this is stopped, its verdict an error that says so. What the
# runner keeps per process is bounded (the watcher's command lines, the files it reads), so only a
# bug or an attack reaches it; the run's record says the runner's peak either way
RUNNER_MAX_RSS_BYTES = 512 << 20


def _own_rss() -> int:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _own_peak() -> int:
    """The runner's resident high-water mark (VmHWM), bytes."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


class SandboxIsolation:
    """The ``Isolation`` of a sandboxed run, from the plan the host half wrote (``memgauge run
    --sandbox PLAN.json``)."""

    def __init__(self, plan: SandboxRun) -> None:
        self.plan = plan
        self.sandbox = plan.sandbox
        self.setup = SandboxSetup(plan)
        self._group: MemoryGroup | None = None
        self._events_dir: str | None = None

    # -- before the program starts

    def enter(self, limits: HardLimits | None) -> HardLimits:
        self.setup.enter()
        return self.setup.hard_limits(limits)

    def prepare(
        self, group: MemoryGroup | None, group_reason: str, by_group: bool
    ) -> tuple[str, dict[str, str]]:
        self._group = group
        self.setup.note_memory(group, group_reason, by_group)
        self._events_dir = self.setup.make_events_dir()
        # the sandbox's scrubbed environment, never memgauge's own
        return self._events_dir, dict(self.plan.env)

    def spawn(
        self, argv: list[str], env: dict[str, str], preexec: Callable[[], None]
    ) -> subprocess.Popen[bytes]:
        setup = self.setup
        setup.note_environment(env)
        setup.write_record()

        def both() -> None:
            preexec()
            setup.preexec()  # last: it gives up root

        try:
            # preexec_fn is safe here: memgauge has started no thread yet
            return subprocess.Popen(argv, env=env, cwd=self.plan.workdir, preexec_fn=both)  # noqa: PLW1509
        except subprocess.SubprocessError as e:  # raised by preexec
            raise InternalError(f"cannot start the program in its sandbox ({e})") from e

    # -- while it runs

    def crossed(self) -> str | None:
        """Why the run must stop now (the measurement's own memory, or its output, passed its
        limit), or None; the scratch space's use sampled meanwhile."""
        if self.setup.scratch is not None:
            self.setup.scratch.sample()
        own = _own_rss()
        if own > RUNNER_MAX_RSS_BYTES:
            self.setup.hit["measurement"] = (
                f"stopped: the runner's own memory passed {format_bytes(RUNNER_MAX_RSS_BYTES)}"
            )
            return f"the measurement's own memory passed {format_bytes(RUNNER_MAX_RSS_BYTES)}"
        limit = self.sandbox.max_output_bytes
        if limit is None or not self.setup.outputs:
            return None
        size = 0
        for fd in self.setup.outputs:
            with contextlib.suppress(OSError):
                size += os.fstat(fd).st_size
        if size > limit:
            self.setup.hit["output"] = f"stopped: its output passed {format_bytes(limit)}"
            return f"output passed the limit of {format_bytes(limit)}"
        return None

    # -- afterwards

    def program_ended(self, reap: Callable[[], None]) -> None:
        # before anything the program wrote is read: nothing of it may run on
        self._kill_leftovers(reap)
        if self._events_dir is not None:
            self._sanitize_events(self._events_dir)

    @contextlib.contextmanager
    def reading_as_program(self) -> Iterator[None]:
        """While the runner reads what the program left (its events, its line samples, and the
        source lines those name): with the program's file permissions, not root's. A line sample
        names any file; root reading it would put ``/etc/shadow`` or another process's
        ``/proc/PID/environ`` (the server's tokens) into the profile. ``setfsuid`` is the calling
        thread's alone, and the runner reads on this thread."""
        uid, libc = self.setup.uid, self.setup.libc
        if uid is None or libc is None:
            yield
            return
        libc.setfsgid(uid)
        libc.setfsuid(uid)
        if libc.setfsuid(uid) != uid or libc.setfsgid(uid) != uid:  # returns the ids now held
            libc.setfsuid(0)
            libc.setfsgid(0)
            raise OSError("cannot take the program's filesystem ids (setfsuid)")
        try:
            yield
        finally:
            libc.setfsuid(0)
            libc.setfsgid(0)

    def _kill_leftovers(self, reap: Callable[[], None] | None = None, timeout: float = 3.0) -> None:
        """Nothing of a sandboxed run outlives it: daemons it started die with it, as soon as the
        program ends. Whatever is in its cgroups or runs as its uid is killed until none is left,
        and reaped by ``reap`` (the runner is their subreaper: unreaped, they would linger as
        zombies)."""
        deadline = time.monotonic() + timeout
        while True:
            if reap is not None:
                reap()
            else:
                with contextlib.suppress(ChildProcessError):
                    while os.waitpid(-1, os.WNOHANG)[0] != 0:
                        pass
            setup, group = self.setup, self._group
            pids = set(setup.pids_group.pids()) if setup.pids_group is not None else set()
            pids |= set(group.pids()) if group is not None else set()
            if setup.uid is not None:
                pids |= set(pids_of_uid(setup.uid))
            pids.discard(os.getpid())
            if not pids or time.monotonic() > deadline:
                return
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)

    def _sanitize_events(self, path: str) -> None:
        """Before the runner, as root, reads the files the program wrote: keep only plain files
        with one link and a sane size. The program owns the directory: a symlink there would make
        root read (and put in the profile) a file the program may not read, a FIFO would hang the
        runner, and a huge file would swell the runner's memory, which no limit of the run's bounds.
        Its processes are all dead by now, so nothing can swap a file back in."""
        dropped = []
        try:
            entries = sorted(os.scandir(path), key=lambda e: e.name)
        except OSError:
            return
        total = 0
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
                if (
                    stat.S_ISREG(st.st_mode)
                    and st.st_nlink == 1
                    and st.st_size <= MAX_EVENTS_FILE_BYTES
                    and total + st.st_size <= MAX_EVENTS_TOTAL_BYTES
                ):
                    total += st.st_size
                    continue
                dropped.append(entry.name)
                if stat.S_ISDIR(st.st_mode):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
            except OSError:
                continue
        if dropped:
            shown = ", ".join(sorted(dropped)[:5]) + (" ..." if len(dropped) > 5 else "")
            self.setup.hit["filesystem"] = (
                f"measurement files not read (links, special files, or past "
                f"{format_bytes(MAX_EVENTS_TOTAL_BYTES)} in all): {shown}"
            )

    def finish(self, profile: Profile) -> None:
        """What the run ran into, into the record, and the record into the profile."""
        setup = self.setup
        if setup.pids_group is not None:
            refused = setup.pids_group.refused()
            if refused:
                setup.hit["processes"] = (
                    f"a new process or thread was refused {refused} time(s) at the limit of "
                    f"{self.sandbox.max_processes}"
                )
        scratch = setup.scratch
        if scratch is not None:
            scratch.sample()
            setup.disk = scratch.figures()
            if scratch.full:
                setup.hit["disk"] = (
                    f"its files passed {format_bytes(scratch.limit)}: writes past it failed (ENOSPC)"
                )
        setup.runner = {"peak_rss_bytes": _own_peak(), "limit_bytes": RUNNER_MAX_RSS_BYTES}
        stopped = profile.exit.stopped_by or ""
        if stopped.startswith("rss") or (profile.exit.oom_killed and self.sandbox.memory_bytes is not None):
            setup.hit["memory"] = stopped or "the OOM killer killed a process"
        if stopped.startswith("wall"):
            setup.hit["wall"] = stopped
        if profile.exit.signal == signal.SIGXFSZ and "output" not in setup.hit:
            setup.hit["output"] = f"killed by SIGXFSZ: a file reached {format_bytes(setup.fsize or 0)}"
        profile.environment["sandbox"] = setup.record()

    def close(self) -> None:
        # whether the program ran or not, and with no reaper left to wait for them
        self._kill_leftovers()
        setup = self.setup
        if setup.pids_group is not None:
            setup.pids_group.close()
            setup.pids_group = None
        if self._events_dir is not None:
            shutil.rmtree(self._events_dir, ignore_errors=True)
            self._events_dir = None
