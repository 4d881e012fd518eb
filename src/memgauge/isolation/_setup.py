"""The runner half of a sandboxed run applies its pieces (:class:`SandboxSetup`): as root, inside
the namespaces the host half made, before the program starts. Each piece the host cannot provide
is recorded as not applied, with the reason, and the run goes ahead."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import stat
import sys
from typing import TYPE_CHECKING, Any

from memgauge._units import format_bytes, format_seconds
from memgauge.isolation._libc import PR_SET_NO_NEW_PRIVS, Libc
from memgauge.isolation._mounts import make_mounts
from memgauge.isolation._probes import in_new_namespace
from memgauge.isolation._protocol import HardLimits
from memgauge.isolation._sandbox import RUNNER_PIECES, empty_record, memgauge_parent
from memgauge.isolation._scratch import Scratch, mount_events
from memgauge.isolation._seccomp import UserNamespaceFilter

if TYPE_CHECKING:
    from memgauge.isolation._sandbox import SandboxRun
    from memgauge.watcher import MemoryGroup, PidsGroup

# RLIMIT_FSIZE of the program: bounds every file it writes (and its output file, which the output
# watchdog stops far earlier); generous because model code saves checkpoints and data files
MAX_FILE_BYTES = 1 << 30


class SandboxSetup:
    """The pieces of one sandboxed run, applied and recorded: ``enter`` before the memory cgroup
    is made, ``note_memory`` once it is, ``write_record`` and ``preexec`` (in the program's child)
    as the program starts. ``applied``, ``not_applied`` and ``hit`` make the record; ``uid``,
    ``pids_group``, ``libc`` and ``outputs`` are what the run holds while it lasts."""

    def __init__(self, plan: SandboxRun) -> None:
        self.plan = plan
        self.sandbox = plan.sandbox
        self.applied: dict[str, str] = {}
        self.not_applied: dict[str, str] = {}
        self.hit: dict[str, str] = {}
        self.uid: int | None = None
        self.pids_group: PidsGroup | None = None
        self.libc: Libc | None = None
        # the program's stdout and stderr, where they are files the output watchdog can measure
        self.outputs: list[int] = []
        self.fsize: int | None = None
        self._nproc: int | None = None
        self._memory_group: str | None = None
        self.scratch: Scratch | None = None
        self._own_mounts = False
        self._userns: UserNamespaceFilter | None = None
        # figures for the record: the scratch space's use, the runner's own memory
        self.disk: dict[str, int] | None = None
        self.runner: dict[str, int] | None = None

    def enter(self) -> None:
        """Everything that needs root in the namespaces, before the program starts. Never raises
        for a piece the host cannot provide: that piece is recorded as not applied."""
        try:
            self.libc = Libc()
        except (OSError, AttributeError):
            self.libc = None
        own_mounts = self._namespaces()
        self._scratch(own_mounts)
        self._filesystem(own_mounts)
        self._user()
        self._disk()
        # again, through the new mounts: a working directory entered before them would still
        # lead (by "..") into the host's /tmp under the private one
        os.chdir(self.plan.workdir)
        self._processes()
        self._output()
        self._wall()

    def _namespaces(self) -> bool:
        """Records the network piece; whether the runner may mount (the filesystem piece)."""
        plan, sandbox = self.plan, self.sandbox
        if sandbox.network:
            self.not_applied["network"] = "not asked for: the sandbox allows the network (network=True)"
        elif "network" in plan.unshared and in_new_namespace("net", plan.host_namespaces):
            self.applied["network"] = (
                "own network namespace (unshare --net): no interface up, not even loopback; "
                "no address, local or remote, can be reached and names do not resolve"
            )
        else:
            self.not_applied["network"] = (
                plan.namespace_reason or "memgauge run was not started in a new network namespace"
            )
        # mounting in the host's namespace would cover the host's own /tmp and /root: only in a
        # namespace that is provably not the host's, whatever the plan says
        own_mounts = "mount" in plan.unshared and in_new_namespace("mnt", plan.host_namespaces)
        if not own_mounts:
            self.not_applied["filesystem"] = (
                plan.namespace_reason or "memgauge run was not started in a new mount namespace"
            )
        elif os.geteuid() != 0:
            self.not_applied["filesystem"] = f"memgauge run is uid {os.geteuid()}, not root: it cannot mount"
            own_mounts = False
        elif self.libc is None:
            self.not_applied["filesystem"] = "mount(2) is not available through the C library"
            own_mounts = False
        return own_mounts

    def _filesystem(self, own_mounts: bool) -> None:
        if not own_mounts:
            return
        assert self.libc is not None
        scratch = self.scratch
        try:
            self.applied["filesystem"] = make_mounts(
                self.plan, self.libc, None if scratch is None else scratch.private_dir
            )
            self._own_mounts = True
        except OSError as e:
            if scratch is not None:
                scratch.undo()
                self.scratch = None
                self.not_applied["disk"] = "no scratch filesystem without the filesystem piece"
            self.not_applied["filesystem"] = f"the mounts failed, none is kept: {e}"

    def _user(self) -> None:
        plan, sandbox = self.plan, self.sandbox
        if not sandbox.unprivileged:
            self.not_applied["user"] = "not asked for (unprivileged=False)"
            return
        if plan.uid is None:
            self.not_applied["user"] = plan.user_reason or "no uid was leased for the run"
            return
        if os.geteuid() != 0:
            self.not_applied["user"] = f"memgauge run is uid {os.geteuid()}, not root: it cannot switch users"
            return
        problem = self._reachable(plan.uid)
        if problem:
            self.not_applied["user"] = f"uid {plan.uid} {problem}; the program runs as root"
            return
        self.uid = plan.uid
        userns = UserNamespaceFilter()
        if userns.problem:
            namespaces = f"new user namespaces are not refused ({userns.problem})"
        else:
            self._userns = userns
            namespaces = "no new user namespaces (seccomp: unshare/clone with CLONE_NEWUSER refused)"
        self.applied["user"] = (
            f"uid {plan.uid}, gid {plan.uid}, no supplementary groups, no new privileges "
            f"(setuid programs stay unprivileged); the uid is the run's alone; {namespaces}"
        )

    def _scratch(self, own_mounts: bool) -> None:
        """The disk piece's first half, before the mounts: its filesystem, with the upload."""
        limit = self.sandbox.disk_bytes
        if limit is None:
            self.not_applied["disk"] = "not asked for (disk_bytes=None); every file at most 1 GiB"
            return
        if not own_mounts or self.libc is None or os.geteuid() != 0:
            why = self.not_applied.get("filesystem", "no mount namespace")
            self.not_applied["disk"] = f"no scratch filesystem without the filesystem piece ({why})"
            return
        scratch = Scratch(self.plan, self.libc, limit)
        try:
            scratch.prepare()
            self.scratch = scratch
        except OSError as e:
            self.not_applied["disk"] = f"the scratch filesystem could not be made: {e}"

    def _disk(self) -> None:
        """Its second half, once the uid is known: the run's own directories bound from it."""
        if self.scratch is None:
            return
        try:
            self.applied["disk"] = self.scratch.bind(self.uid)
        except OSError as e:
            self.scratch = None
            self.not_applied["disk"] = f"the scratch filesystem could not be bound: {e}"

    def _reachable(self, uid: int) -> str:
        """Whether ``uid`` can run the program: the interpreter and memgauge must be reachable
        by it (they are not when they live under /root and no mount namespace bound them back).
        Checked in a forked child that drops to the uid: ``access`` answers for the real uid."""
        checks = [(os.path.realpath(sys.executable), os.X_OK), (self.plan.workdir, os.W_OK | os.X_OK)]
        checks += [(p, os.R_OK | os.X_OK) for p in (memgauge_parent(), *sys.path) if p and os.path.isdir(p)]
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the runner has no threads yet: forking is safe
            code = 0
            try:
                os.close(read)
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                for path, mode in checks:
                    if not os.access(path, mode):
                        os.write(write, f"cannot reach {path}".encode())
                        code = 1
                        break
            except BaseException as e:
                with contextlib.suppress(BaseException):
                    os.write(write, f"cannot be switched to: {e}".encode())
                code = 2
            os._exit(code)
        os.close(write)
        with os.fdopen(read, "rb") as f:
            message = f.read().decode(errors="replace")
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            return message or "cannot run the program"
        return ""

    def _processes(self) -> None:
        limit = self.sandbox.max_processes
        if limit is None:
            self.not_applied["processes"] = "not asked for (max_processes=None)"
            return
        from memgauge.watcher import create_pids_group

        group, reason = create_pids_group(limit) if os.geteuid() == 0 else (None, "not root")
        if group is not None:
            self.pids_group = group
            _hide(group.path, self.uid)
            self.applied["processes"] = (
                f"at most {limit} tasks at once (threads count too): cgroup v{group.version} pids.max"
            )
        elif self.uid is not None:
            # only without the cgroup: the kernel checks RLIMIT_NPROC first, and a fork it refuses
            # is not counted in pids.events, which is how the record learns the run hit its limit
            self._nproc = limit
            self.applied["processes"] = (
                f"at most {limit} tasks at once (threads count too): RLIMIT_NPROC of uid {self.uid}, "
                f"which is the run's alone (no pids cgroup: {reason})"
            )
        else:
            self.not_applied["processes"] = (
                f"no pids cgroup ({reason}), and RLIMIT_NPROC binds only an unprivileged uid, which "
                "the program does not run as"
            )

    def _output(self) -> None:
        limit = self.sandbox.max_output_bytes
        if limit is None:
            self.not_applied["output"] = "not asked for (max_output_bytes=None); core dumps are still off"
            return
        self.fsize = max(limit, MAX_FILE_BYTES)
        seen: set[tuple[int, int]] = set()
        for fd in (1, 2):
            try:
                st = os.fstat(fd)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                self.outputs.append(fd)
        files = (
            f"every file it writes at most {format_bytes(self.fsize)} (RLIMIT_FSIZE); "
            "no core dumps (RLIMIT_CORE 0)"
        )
        if self.outputs:
            self.applied["output"] = (
                f"stdout and stderr together at most {format_bytes(limit)} (watchdog on the output "
                f"file every {_watchdog_interval():g} s); {files}"
            )
        else:
            self.not_applied["output"] = f"stdout and stderr are not files memgauge can watch; {files}"

    def _wall(self) -> None:
        seconds = self.sandbox.wall_seconds
        if seconds is None:
            self.not_applied["wall"] = "not asked for (wall_seconds=None)"
            return
        backstop = self.plan.backstop_seconds
        after = "" if backstop is None else f"; the job kills the whole run at {format_seconds(backstop)}"
        self.applied["wall"] = f"{format_seconds(seconds)}: watchdog every {_watchdog_interval():g} s{after}"

    def hard_limits(self, enforce: HardLimits | None) -> HardLimits:
        """The limits the runner's watchdog enforces: the sandbox's, tightened by any others."""
        return (enforce or HardLimits()).tightened(
            memory_bytes=self.sandbox.memory_bytes, wall_seconds=self.sandbox.wall_seconds
        )

    def note_memory(self, group: MemoryGroup | None, group_reason: str, by_group: bool) -> None:
        self._memory_group = None if group is None else group.path
        if group is not None:
            _hide(group.path, self.uid)
        limit = self.sandbox.memory_bytes
        if limit is None:
            self.not_applied["memory"] = "not asked for (memory_bytes=None)"
        elif by_group and group is not None:
            name = "memory.max" if group.version == 2 else "memory.limit_in_bytes"
            self.applied["memory"] = (
                f"{format_bytes(limit)}: cgroup v{group.version} {name} (swap closed too), and the "
                f"watchdog every {_watchdog_interval():g} s as a last resort"
            )
        else:
            why = group_reason or "the cgroup refused the limit"
            self.applied["memory"] = (
                f"{format_bytes(limit)}: watchdog only, every {_watchdog_interval():g} s (no cgroup "
                f"limit: {why}); a spike shorter than that can pass it"
            )

    def make_events_dir(self) -> str:
        """The line sampler's directory, inside the run's own: the program writes its events there,
        so it must belong to the program's uid (else line attribution silently stays empty)."""
        path = os.path.join(self.plan.run_dir, "events")
        os.mkdir(path, 0o700)
        if self.uid is not None:
            os.chown(path, self.uid, self.uid)
        if self.scratch is not None and self.libc is not None:
            # not on the host's disk: the program writes here too
            mount_events(path, self.libc, self.uid)
        return path

    def note_environment(self, env: dict[str, str]) -> None:
        self.applied["environment"] = (
            "scrubbed, nothing of the server's: only " + ", ".join(sorted(env)) + " (memgauge's own "
            "MEMGAUGE_* and PYTHONPATH included)"
        )

    def record(self) -> dict[str, Any]:
        record = empty_record()
        for name in RUNNER_PIECES:
            if name in self.applied:
                record["applied"][name] = self.applied[name]
            elif name in self.not_applied:
                record["not_applied"][name] = self.not_applied[name]
        record["hit"] = dict(self.hit)
        if self.disk is not None:
            record["disk"] = dict(self.disk)
        if self.runner is not None:
            record["runner"] = dict(self.runner)
        return record

    def write_record(self) -> None:
        """Written before the program starts, so the job knows what held even if the runner is
        killed before it writes a profile, and which cgroups to empty and remove then."""
        groups = [g for g in (self._memory_group, self.pids_group and self.pids_group.path) if g]
        with contextlib.suppress(OSError), open(self.plan.record_path, "w") as f:
            json.dump({**self.record(), "cgroups": groups}, f)

    def preexec(self) -> None:
        """In the program's child, after it joined the memory cgroup: the pids cgroup and rlimits
        (while still root), then the uid, last."""
        if self.pids_group is not None:
            with open(self.pids_group.procs_file, "w") as f:
                f.write(str(os.getpid()))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if self.fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (self.fsize, self.fsize))
        uid = self.uid
        if uid is not None:
            if self._nproc is not None:
                resource.setrlimit(resource.RLIMIT_NPROC, (self._nproc, self._nproc))
            if self.libc is not None and self.libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
            if self._userns is not None:
                self._userns.install()
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)


def _hide(path: str, uid: int | None) -> None:
    """A run's cgroup, readable by root and the run's own gid only (each run has a gid of its
    own): no program reads another run's memory figures from /sys/fs/cgroup. The run's gid keeps
    it readable while the runner reads as the program (``reading_as_program``)."""
    with contextlib.suppress(OSError):
        if uid is not None:
            os.chown(path, 0, uid)
        os.chmod(path, 0o750 if uid is not None else 0o700)


def _watchdog_interval() -> float:
    return HardLimits.WATCHDOG_INTERVAL
