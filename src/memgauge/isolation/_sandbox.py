"""Sandboxed runs: untrusted code measured without letting it reach the host, the network, other
runs or the server's data.

A sandboxed run has two halves, because the pieces need different vantage points:

* the **host** half (:class:`HostRun`, used by ``sweep._job.execute_job``) runs in the server's
  process. It makes the run's fresh directory, leases a uid no other run holds (an ``flock`` held
  for the run's lifetime, so concurrent runs never share one, even across processes), unpacks the
  upload, scrubs the environment, and starts ``memgauge run --sandbox PLAN.json`` under
  ``unshare --net --mount`` so that the runner starts in its own network and mount namespaces.
  Afterwards it kills whatever still runs as the uid, removes the directory and releases the uid.
* the **runner** half (:class:`SandboxSetup`, used by ``run_program``) runs as root inside those
  namespaces. It makes the mounts (private ``/tmp``, empty home and runtime directories, the
  ``hidden_paths`` hidden, and the interpreter bound back read-only where it lives in a closed
  directory such as ``/root``), the pids cgroup, and the program's ``preexec``: rlimits, then
  ``setgroups([])``, ``setgid``, ``setuid`` to the leased uid. The runner stays root because it
  needs cgroups and every process's ``/proc``; only the program is unprivileged.

Every piece that a host cannot provide (not root, no ``unshare``, no pids controller ...) is left
out and the run goes ahead: the record (:data:`PIECES`, ``applied`` / ``not_applied``) says which
pieces held and why the others did not, so a caller can refuse results it cannot trust.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import random
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from memgauge._units import format_bytes, format_seconds
from memgauge.capture import kill_until_gone

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from memgauge.model import Profile
    from memgauge.runner import HardLimits
    from memgauge.watcher import MemoryGroup, PidsGroup

__all__ = [
    "PIECES",
    "HostRun",
    "Sandbox",
    "SandboxRun",
    "SandboxSetup",
    "Upload",
    "uid_lock_path",
]

# the names of the record, in the order a report lists them
PIECES = (
    "workdir",
    "process_group",
    "network",
    "memory",
    "wall",
    "processes",
    "output",
    "environment",
    "user",
    "filesystem",
)
RUNNER_PIECES = PIECES[2:]  # what the runner, inside the namespaces, applies and records

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
UID_FIRST = 200_000
UID_LAST = 299_999
# RLIMIT_FSIZE of the program: bounds every file it writes (and its output file, which the output
# watchdog stops far earlier); generous because model code saves checkpoints and data files
MAX_FILE_BYTES = 1 << 30
# how long after its wall limit the job itself kills a run whose runner did not stop it
BACKSTOP_SECONDS = 10.0
RUN_PREFIX = "memgauge-sandbox-"
# the largest measurement file (line samples, events) of the program's that the runner reads
MAX_EVENTS_FILE_BYTES = 256 << 20
# what the runner reads of them all together: everything in them may become part of the profile
# (a process record per pid an event names, its command line as given), and reading them costs
# the runner, which no limit of the run's bounds, many times their size in memory
MAX_EVENTS_TOTAL_BYTES = 16 << 20
# the largest profile a sandboxed run may give (the service stores it and renders it per request)
MAX_PROFILE_BYTES = 16 << 20

# scratch directories every program may write to: each run gets its own, empty (tmpfs)
_PRIVATE_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
# directories no run needs and that hold other people's things (home directories, other
# services' unix sockets such as PostgreSQL's in /run/postgresql): covered by an empty tmpfs
_EMPTY_DIRS = ("/home", "/root", "/run")

_MS_RDONLY = 0x1
_MS_NOSUID = 0x2
_MS_NODEV = 0x4
_MS_NOEXEC = 0x8
_MS_REMOUNT = 0x20
_MS_BIND = 0x1000
_MS_REC = 0x4000
_MS_PRIVATE = 0x40000
_MNT_DETACH = 0x2
_PR_SET_NO_NEW_PRIVS = 38


@dataclass(frozen=True)
class Sandbox:
    """What a sandboxed run is allowed. ``None`` for a limit: not limited.

    ``max_processes`` counts tasks, threads included (that is what ``pids.max`` counts);
    ``max_output_bytes`` bounds the program's stdout and stderr together; ``network`` True leaves
    the host's network reachable; ``unprivileged`` runs the program as a uid of its own;
    ``hidden_paths`` are directories (or files) the run must not see; ``env`` is added to the
    program's scrubbed environment.
    """

    memory_bytes: int | None = None
    wall_seconds: float | None = None
    max_processes: int | None = 64
    max_output_bytes: int | None = 1 << 20
    network: bool = False
    unprivileged: bool = True
    hidden_paths: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # a list from JSON or a caller is accepted, but the frozen value holds a tuple
        object.__setattr__(self, "hidden_paths", tuple(self.hidden_paths))
        for name in ("memory_bytes", "max_processes", "max_output_bytes"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"Sandbox.{name} must be a positive integer or None, not {value!r}")
        if self.wall_seconds is not None and not self.wall_seconds > 0:
            raise ValueError(f"Sandbox.wall_seconds must be positive or None, not {self.wall_seconds!r}")
        for path in self.hidden_paths:
            if not isinstance(path, str) or not os.path.isabs(path):
                raise ValueError(f"Sandbox.hidden_paths must be absolute paths, not {path!r}")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in self.env.items()):
            raise ValueError("Sandbox.env must map strings to strings")

    def to_dict(self) -> dict[str, Any]:
        return {
            "memory_bytes": self.memory_bytes,
            "wall_seconds": self.wall_seconds,
            "max_processes": self.max_processes,
            "max_output_bytes": self.max_output_bytes,
            "network": self.network,
            "unprivileged": self.unprivileged,
            "hidden_paths": list(self.hidden_paths),
            "env": dict(self.env),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Sandbox:
        """Strict: an unknown key is an error, because a misspelt limit silently ignored would be
        a limit not applied."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown Sandbox field(s): {', '.join(unknown)}")
        values = dict(data)
        if "hidden_paths" in values:
            values["hidden_paths"] = tuple(values["hidden_paths"])
        if "env" in values:
            values["env"] = dict(values["env"])
        return cls(**values)


@dataclass(frozen=True)
class Upload:
    """The uploaded program: a ``.py`` file, or a ``.zip`` / ``.tar.gz`` project (see
    ``runner._upload``). ``data`` is left out of the repr: it can be megabytes."""

    name: str
    data: bytes = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "data": self.data}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Upload:
        return cls(str(data["name"]), bytes(data["data"]))


@dataclass
class SandboxRun:
    """What the host half tells the runner (``memgauge run --sandbox PLAN.json``): the run's
    directories, the leased uid, which namespaces were made and what they are not (the host's own
    namespace ids, so the runner can check it really is in new ones before it mounts anything),
    and the program's environment."""

    sandbox: Sandbox
    run_dir: str
    workdir: str
    home: str
    tmp: str
    private: str
    uid: int | None = None
    user_reason: str = ""
    unshared: list[str] = field(default_factory=list)
    namespace_reason: str = ""
    host_namespaces: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    backstop_seconds: float | None = None

    @property
    def record_path(self) -> str:
        return os.path.join(self.private, "sandbox-record.json")

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["sandbox"] = self.sandbox.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SandboxRun:
        values = dict(data)
        values["sandbox"] = Sandbox.from_dict(values["sandbox"])
        return cls(**values)

    def save(self, path: str) -> None:
        with open(path, "w") as f:
            json.dump(self.to_dict(), f)

    @classmethod
    def load(cls, path: str) -> SandboxRun:
        with open(path) as f:
            return cls.from_dict(json.load(f))


def empty_record() -> dict[str, Any]:
    """``applied`` {piece: detail}, ``not_applied`` {piece: reason}, ``hit`` {piece: what the run
    ran into} (a limit it reached)."""
    return {"applied": {}, "not_applied": {}, "hit": {}}


# -- host half -------------------------------------------------------------------------------------


class _UidLease:
    """A uid held for one run: the ``flock`` on its lock file is the lease. Released by removing
    the file, then closing it (so lock files exist only for runs in progress); a taker checks,
    once it holds a lock, that the file it locked is still the one at the path."""

    def __init__(self, uid: int, fd: int, path: str) -> None:
        self.uid = uid
        self.path = path
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.path)
            os.close(self._fd)
            self._fd = None


def _uid_lock_dir() -> str:
    """A root-only directory for the uid lock files: ``/run/memgauge/uids``, else one in the
    temporary directory. Refused when it is not a real directory owned by root with mode 0700
    (someone could otherwise pre-create it and hold every lock)."""
    reasons = []
    for path in ("/run/memgauge/uids", os.path.join(tempfile.gettempdir(), "memgauge-uids")):
        try:
            os.makedirs(path, 0o700, exist_ok=True)
            st = os.lstat(path)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0:
                reasons.append(f"{path} is not a directory owned by root")
                continue
            if stat.S_IMODE(st.st_mode) != 0o700:
                os.chmod(path, 0o700)
            return path
        except OSError as e:
            reasons.append(f"{path}: {e.strerror}")
    raise OSError("; ".join(reasons))


def uid_lock_path(uid: int) -> str:
    """The lock file whose ``flock`` leases ``uid`` to a run (there only while a run holds it)."""
    return os.path.join(_uid_lock_dir(), str(uid))


def _proc_uids() -> Iterator[tuple[int, bool, list[int]]]:
    """Every process now: its pid, whether it is still alive (not a zombie: dead already, it waits
    only for its parent to reap it), and its real, effective, saved and filesystem uids."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        alive = True
        try:
            with open(f"/proc/{name}/status") as f:
                for line in f:
                    if line.startswith("State:"):
                        alive = line.split()[1] not in ("Z", "X")
                    elif line.startswith("Uid:"):
                        yield int(name), alive, [int(x) for x in line.split()[1:]]
                        break
        except (OSError, ValueError):
            continue


def _uids_in_use() -> set[int]:
    """Every uid some process runs as now."""
    return {uid for _, _, uids in _proc_uids() for uid in uids}


def _pids_of_uid(uid: int) -> list[int]:
    """The live processes running as ``uid``."""
    return [pid for pid, alive, uids in _proc_uids() if alive and uid in uids]


def kill_uid(uid: int, timeout: float = 3.0) -> None:
    """SIGKILL every process running as ``uid`` until none is left: whatever a run left behind
    (daemons, a fork bomb) dies before its uid is handed to the next run."""
    kill_until_gone(lambda: _pids_of_uid(uid), timeout, pause=0.01)


def _lease_uid() -> tuple[_UidLease | None, str]:
    """A uid in [UID_FIRST, UID_LAST] that no account names, no process runs as, and no other
    run holds; probing starts at a random point so concurrent servers rarely contend."""
    import pwd

    try:
        lock_dir = _uid_lock_dir()
    except OSError as e:
        return None, f"no directory for uid locks: {e}"
    busy = _uids_in_use()
    count = UID_LAST - UID_FIRST + 1
    start = random.randrange(count)
    for i in range(count):
        uid = UID_FIRST + (start + i) % count
        if uid in busy:
            continue
        try:
            pwd.getpwuid(uid)
            continue  # an account: not ours to use
        except KeyError:
            pass
        path = os.path.join(lock_dir, str(uid))
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # the holder may have removed the file between our open and our lock: then what we
            # locked is gone, and someone else may hold the file now at the path
            if os.fstat(fd).st_ino != os.stat(path, follow_symlinks=False).st_ino:
                raise OSError("the lock file was replaced")
        except OSError:
            os.close(fd)
            continue
        return _UidLease(uid, fd, path), ""
    return None, f"no free uid in {UID_FIRST}-{UID_LAST}"


_probes: dict[tuple[str, ...], str] = {}


def _unshare_problem(flags: tuple[str, ...]) -> str:
    """Why ``unshare FLAGS`` cannot work here ("" when it can); tried once per process."""
    if flags in _probes:
        return _probes[flags]
    exe = shutil.which("unshare") or shutil.which("unshare", path=SAFE_PATH + ":/usr/sbin:/sbin")
    problem = ""
    if exe is None:
        problem = "the unshare command (util-linux) is not installed"
    else:
        try:
            done = subprocess.run(
                [exe, *flags, "--", "true"], capture_output=True, text=True, timeout=20, check=False
            )
            if done.returncode != 0:
                detail = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
                who = "" if os.geteuid() == 0 else f" (memgauge runs as uid {os.geteuid()}, not root)"
                problem = f"unshare {' '.join(flags)} failed: {detail}{who}"
        except (OSError, subprocess.SubprocessError) as e:
            problem = f"unshare {' '.join(flags)} failed: {e}"
    _probes[flags] = problem
    return problem


def _namespace_ids() -> dict[str, str]:
    ids = {}
    for kind in ("net", "mnt"):
        with contextlib.suppress(OSError):
            ids[kind] = os.readlink(f"/proc/self/ns/{kind}")
    return ids


def _in_new_namespace(kind: str, host: dict[str, str]) -> bool:
    """This process is in a ``kind`` namespace of its own: not the host's (as the plan recorded
    it), not its parent's (``unshare`` execs the runner, so the parent is the job's process), not
    init's."""
    try:
        now = os.readlink(f"/proc/self/ns/{kind}")
    except OSError:
        return False
    if not host.get(kind):
        return False
    others = {host[kind]}
    for pid in (os.getppid(), 1):
        with contextlib.suppress(OSError):
            others.add(os.readlink(f"/proc/{pid}/ns/{kind}"))
    return now not in others


def _chown_tree(path: str, uid: int) -> None:
    """Hand an unpacked upload to the run's uid, never following a link."""
    os.chown(path, uid, uid, follow_symlinks=False)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.chown(os.path.join(root, name), uid, uid, follow_symlinks=False)


def _remove_run_dir(path: str) -> None:
    # root removes anything regardless of modes; a directory the program made unwritable too
    shutil.rmtree(path, ignore_errors=True)


class HostRun:
    """The host half of one sandboxed run; ``prepare`` it, start ``command(...)`` with
    ``runner_env()`` in ``workdir``, then always ``close`` it."""

    def __init__(self, sandbox: Sandbox, job_env: dict[str, str] | None = None) -> None:
        self.sandbox = sandbox
        self.job_env = dict(job_env or {})
        self.plan: SandboxRun | None = None
        self.plan_path = ""
        self._lease: _UidLease | None = None
        self._unshare: list[str] = []

    @property
    def workdir(self) -> str:
        assert self.plan is not None
        return self.plan.workdir

    @property
    def private(self) -> str:
        assert self.plan is not None
        return self.plan.private

    def prepare(self, upload: Upload | None, timeout_seconds: float | None = None) -> None:
        """Make the run's directories, lease its uid, plan its namespaces and unpack ``upload``
        into the workdir. Raises ``MemgaugeError`` (``UploadError``) for an upload that cannot be
        unpacked; ``close`` still cleans up."""
        from memgauge.capture import orphaned_entries

        parent = tempfile.gettempdir()
        for stale in orphaned_entries(parent, RUN_PREFIX):  # left by a server that was killed
            _remove_run_dir(stale)
        run_dir = tempfile.mkdtemp(prefix=f"{RUN_PREFIX}{os.getpid()}-", dir=parent)
        # 0711: the program's uid may pass through to its own directories, not list the others
        os.chmod(run_dir, 0o711)
        sandbox = self.sandbox
        uid: int | None = None
        user_reason = ""
        if not sandbox.unprivileged:
            user_reason = "not asked for (unprivileged=False)"
        elif os.geteuid() != 0:
            user_reason = f"memgauge runs as uid {os.geteuid()}, not root: it cannot switch users"
        else:
            self._lease, user_reason = _lease_uid()
            uid = self._lease.uid if self._lease is not None else None
        paths = {name: os.path.join(run_dir, name) for name in ("work", "home", "tmp", "private")}
        for name, path in paths.items():
            os.mkdir(path, 0o700)
            if uid is not None and name != "private":
                os.chown(path, uid, uid)
        flags: tuple[str, ...] = ("--mount",) if sandbox.network else ("--net", "--mount")
        problem = _unshare_problem(flags)
        if problem:
            # a host may allow one and not the other: take what it allows
            flags = tuple(f for f in flags if len(flags) > 1 and not _unshare_problem((f,)))
        if not _unshare_problem(("--ipc",)):
            # System V shared memory and message queues die with the run; no run sees another's
            flags += ("--ipc",)
        if flags:
            exe = shutil.which("unshare") or shutil.which("unshare", path=SAFE_PATH + ":/usr/sbin:/sbin")
            assert exe is not None
            propagation = ["--propagation", "private"] if "--mount" in flags else []
            self._unshare = [exe, *flags, *propagation, "--"]
        python_bin = os.path.dirname(os.path.abspath(sys.executable))
        base = {
            "PATH": f"{python_bin}:{SAFE_PATH}",
            "HOME": paths["home"],
            "TMPDIR": paths["tmp"],
            "LANG": "C.UTF-8",
            "PYTHONUNBUFFERED": "1",
        }
        env = {**base, "PYTHONPATH": _memgauge_parent(), **self.job_env, **sandbox.env}
        if "PYTHONPATH" in self.job_env or "PYTHONPATH" in sandbox.env:
            # theirs after memgauge's: the program's bootstrap must import memgauge
            env["PYTHONPATH"] = _memgauge_parent() + os.pathsep + env["PYTHONPATH"]
        backstop = None if sandbox.wall_seconds is None else sandbox.wall_seconds + BACKSTOP_SECONDS
        if timeout_seconds is not None:
            backstop = timeout_seconds if backstop is None else min(backstop, timeout_seconds)
        self.plan = SandboxRun(
            sandbox=sandbox,
            run_dir=run_dir,
            workdir=paths["work"],
            home=paths["home"],
            tmp=paths["tmp"],
            private=paths["private"],
            uid=uid,
            user_reason=user_reason,
            unshared=[{"--net": "network", "--mount": "mount", "--ipc": "ipc"}[f] for f in flags],
            namespace_reason=problem,
            host_namespaces=_namespace_ids(),
            env=env,
            backstop_seconds=backstop,
        )
        self.plan_path = os.path.join(paths["private"], "plan.json")
        self.plan.save(self.plan_path)
        if upload is not None:
            from memgauge.isolation._upload import extract_upload

            extract_upload(upload.name, upload.data, paths["work"])
            if uid is not None:
                _chown_tree(paths["work"], uid)

    def command(self, argv: list[str]) -> list[str]:
        """``argv`` (``python -m memgauge run ...``) inside new namespaces where possible."""
        return [*self._unshare, *argv]

    def runner_env(self) -> dict[str, str]:
        """The runner's environment: nothing of the server's either (the runner passes on only
        what the plan says), but memgauge must import; and the job's own variables, which the
        caller set (the service marks every process of a run with them, to find them after a
        crash)."""
        assert self.plan is not None
        keep = ("PATH", "HOME", "TMPDIR", "LANG", "PYTHONUNBUFFERED")
        env = {k: self.plan.env[k] for k in keep if k in self.plan.env}
        env["PYTHONPATH"] = _memgauge_parent()
        env.update(self.job_env)
        return env

    def timeout(self) -> float | None:
        return None if self.plan is None else self.plan.backstop_seconds

    def record(
        self, profile: dict[str, Any] | None, output_bytes: int, why_not: str, *, started: bool = True
    ) -> dict[str, Any]:
        """The run's record: the host's pieces, then the runner's (from the file it wrote before
        the program started; ``why_not`` explains pieces it never got to, and every piece of a
        run that never ``started``)."""
        record = empty_record()
        plan = self.plan
        if plan is None or not started:
            for name in PIECES:
                record["not_applied"][name] = why_not
            return record
        uid = plan.uid
        owner = f"uid {uid}" if uid is not None else f"uid {os.geteuid()}"
        record["applied"]["workdir"] = (
            f"fresh {plan.workdir} (0700, owned by {owner}) holding only the upload; HOME and TMPDIR "
            "beside it; all removed afterwards"
        )
        record["applied"]["process_group"] = (
            "own session and process group (setsid); the whole group is killed on timeout or cancel"
            + ("; own System V IPC namespace (unshare --ipc)" if "ipc" in plan.unshared else "")
        )
        runner: dict[str, Any] | None = None
        with contextlib.suppress(OSError, ValueError), open(plan.record_path) as f:
            runner = json.load(f)
        if profile is not None:
            inside = profile.get("environment", {}).get("sandbox")
            if isinstance(inside, dict):
                runner = inside  # the latest: it has what the run hit
        for name in RUNNER_PIECES:
            if runner is not None and name in runner.get("applied", {}):
                record["applied"][name] = runner["applied"][name]
            elif runner is not None and name in runner.get("not_applied", {}):
                record["not_applied"][name] = runner["not_applied"][name]
            else:
                record["not_applied"][name] = why_not
        if runner is not None:
            record["hit"].update(runner.get("hit", {}))
        limit = self.sandbox.max_output_bytes
        if limit is not None and output_bytes > limit and "output" not in record["hit"]:
            record["hit"]["output"] = f"{format_bytes(output_bytes)} of output, over the limit"
        return record

    def output_error(self, output_bytes: int, profile: dict[str, Any] | None) -> str | None:
        """The job's error when the output limit stopped it (or its output passed the limit
        anyway: a runner that died cannot have said so)."""
        limit = self.sandbox.max_output_bytes
        if limit is None:
            return None
        stopped = ((profile or {}).get("exit") or {}).get("stopped_by") or ""
        if stopped.startswith("output passed") or output_bytes > limit:
            return f"stopped: output passed the limit of {format_bytes(limit)}"
        return None

    def close(self) -> None:
        """Kill what still runs as the run's uid or in its cgroups (a runner killed by the
        backstop could not), remove its directory, release the uid."""
        try:
            if self._lease is not None:
                kill_uid(self._lease.uid)
            if self.plan is not None:
                self._remove_cgroups()
                _remove_run_dir(self.plan.run_dir)
        finally:
            if self._lease is not None:
                self._lease.release()
                self._lease = None

    def _remove_cgroups(self) -> None:
        assert self.plan is not None
        try:
            with open(self.plan.record_path) as f:
                groups = json.load(f).get("cgroups", [])
        except (OSError, ValueError, AttributeError):
            return
        from memgauge.watcher import PREFIX, PidsGroup

        for path in groups:
            real = os.path.realpath(str(path))
            # only a group memgauge made: the file is the runner's, but a program left as root
            # could have rewritten it
            ours = real.startswith("/sys/fs/cgroup/") and os.path.basename(real).startswith(PREFIX)
            if ours and os.path.isdir(real):
                # any cgroup, memory or pids: kill what is in it, then remove it
                PidsGroup(real, 1).close()


def _memgauge_parent() -> str:
    """The directory memgauge is imported from: the runner and the program must import this copy."""
    import memgauge

    return os.path.dirname(os.path.dirname(os.path.realpath(memgauge.__file__)))


# -- runner half -----------------------------------------------------------------------------------


class _Libc:
    """mount(2), umount2(2) and prctl(2) by ctypes: Python 3.11 has no os.unshare or os.mount, and
    the runner must mount inside its namespace without running a tool per mount."""

    def __init__(self) -> None:
        lib = ctypes.CDLL(None, use_errno=True)
        self._mount = lib.mount
        self._mount.argtypes = [
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_ulong,
            ctypes.c_char_p,
        ]
        self._umount2 = lib.umount2
        self._umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
        self.prctl = lib.prctl
        # the calling thread's filesystem ids: files are opened with the permissions of these
        self.setfsuid = lib.setfsuid
        self.setfsgid = lib.setfsgid

    def mount(
        self, source: str | None, target: str, fstype: str | None, flags: int, data: str | None
    ) -> None:
        rc = self._mount(
            None if source is None else source.encode(),
            target.encode(),
            None if fstype is None else fstype.encode(),
            flags,
            None if data is None else data.encode(),
        )
        if rc != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"mount {fstype or source or ''} on {target}: {os.strerror(err)}")

    def umount(self, target: str) -> None:
        self._umount2(target.encode(), _MNT_DETACH)


def _under(path: str, top: str) -> bool:
    """``path`` is ``top`` or inside it."""
    return path == top or path.startswith(top.rstrip("/") + "/")


def _outermost(paths: set[str]) -> list[str]:
    kept: list[str] = []
    for path in sorted(paths, key=lambda p: (p.count("/"), p)):
        if not any(_under(path, k) for k in kept):
            kept.append(path)
    return kept


def _wanted_paths(run_dir: str) -> set[str]:
    """What the program needs to see: the interpreter, the virtual environment, every directory
    on the runner's ``sys.path`` (the program's Python finds the same ones), the directory memgauge
    is imported from, and the run's own directory; as real paths."""
    candidates = [
        os.path.dirname(os.path.abspath(sys.executable)),
        os.path.dirname(os.path.realpath(sys.executable)),
        sys.prefix,
        sys.exec_prefix,
        sys.base_prefix,
        sys.base_exec_prefix,
        _memgauge_parent(),
        run_dir,
        *sys.path,
    ]
    found: set[str] = set()
    for path in candidates:
        if not path or not os.path.isabs(path):
            continue
        real = os.path.realpath(path)
        if os.path.isfile(real):  # python311.zip and the like
            real = os.path.dirname(real)
        if os.path.isdir(real) and real != "/":
            found.add(real)
    return found


def _closed_ancestor(path: str) -> str | None:
    """The outermost directory on the way to ``path`` that others may not pass through (no
    o+x), such as ``/root``: an unprivileged uid cannot reach anything below it."""
    parts = path.strip("/").split("/")
    for i in range(1, len(parts) + 1):
        ancestor = "/" + "/".join(parts[:i])
        try:
            mode = os.stat(ancestor).st_mode
        except OSError:
            return None
        if not mode & stat.S_IXOTH:
            return ancestor if ancestor != path else None
    return None


class _Mounts:
    """The mounts of one run, in the runner's own mount namespace (and undone there if one fails
    half way: a half-covered filesystem could leave the program without an interpreter)."""

    def __init__(self, libc: _Libc) -> None:
        self.libc = libc
        self.done: list[str] = []

    def mount(
        self, source: str | None, target: str, fstype: str | None, flags: int, data: str | None
    ) -> None:
        self.libc.mount(source, target, fstype, flags, data)
        # only new mounts are undone: a remount or a propagation change (of "/" itself!) is not
        # a mount of its own, and unmounting its target would take the whole tree away
        if not flags & (_MS_REMOUNT | _MS_PRIVATE):
            self.done.append(target)

    def undo(self) -> None:
        for target in reversed(self.done):
            with contextlib.suppress(OSError):
                self.libc.umount(target)
        self.done.clear()


class SandboxSetup:
    """The runner half of a sandboxed run (see the module docstring). ``enter`` before the memory
    cgroup is made, ``preexec`` in the program's child, ``crossed`` on every watchdog sample,
    ``finish`` on the profile, ``close`` always."""

    def __init__(self, plan: SandboxRun) -> None:
        self.plan = plan
        self.sandbox = plan.sandbox
        self.applied: dict[str, str] = {}
        self.not_applied: dict[str, str] = {}
        self.hit: dict[str, str] = {}
        self.uid: int | None = None
        self.pids_group: PidsGroup | None = None
        self._nproc: int | None = None
        self._fsize: int | None = None
        self._outputs: list[int] = []
        self._libc: _Libc | None = None
        self._events_dir: str | None = None
        self._memory_group: str | None = None

    # -- before the program starts

    def enter(self) -> None:
        """Everything that needs root in the namespaces, before the program starts. Never raises
        for a piece the host cannot provide: that piece is recorded as not applied."""
        try:
            self._libc = _Libc()
        except (OSError, AttributeError):
            self._libc = None
        own_mounts = self._namespaces()
        self._filesystem(own_mounts)
        # again, through the new mounts: a working directory entered before them would still
        # lead (by "..") into the host's /tmp under the private one
        os.chdir(self.plan.workdir)
        self._user()
        self._processes()
        self._output()
        self._wall()

    def _namespaces(self) -> bool:
        """Records the network piece; whether the runner may mount (the filesystem piece)."""
        plan, sandbox = self.plan, self.sandbox
        if sandbox.network:
            self.not_applied["network"] = "not asked for: the sandbox allows the network (network=True)"
        elif "network" in plan.unshared and _in_new_namespace("net", plan.host_namespaces):
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
        own_mounts = "mount" in plan.unshared and _in_new_namespace("mnt", plan.host_namespaces)
        if not own_mounts:
            self.not_applied["filesystem"] = (
                plan.namespace_reason or "memgauge run was not started in a new mount namespace"
            )
        elif os.geteuid() != 0:
            self.not_applied["filesystem"] = f"memgauge run is uid {os.geteuid()}, not root: it cannot mount"
            own_mounts = False
        elif self._libc is None:
            self.not_applied["filesystem"] = "mount(2) is not available through the C library"
            own_mounts = False
        return own_mounts

    def _filesystem(self, own_mounts: bool) -> None:
        if not own_mounts:
            return
        assert self._libc is not None
        mounts = _Mounts(self._libc)
        try:
            detail = self._mount_all(mounts)
        except OSError as e:
            mounts.undo()
            self.not_applied["filesystem"] = f"the mounts failed, none is kept: {e}"
            return
        self.applied["filesystem"] = detail

    def _mount_all(self, mounts: _Mounts) -> str:
        plan = self.plan
        wanted = _wanted_paths(plan.run_dir)
        needed = _outermost(wanted)
        run_dir = os.path.realpath(plan.run_dir)
        covers: dict[str, str] = {}  # path -> private | empty | hidden
        for path in (*_PRIVATE_DIRS, os.path.dirname(run_dir)):
            covers.setdefault(os.path.realpath(path), "private")
        for path in _EMPTY_DIRS:
            covers.setdefault(os.path.realpath(path), "empty")
        if plan.uid is not None:
            for path in needed:
                closed = _closed_ancestor(path)
                if closed is not None:
                    covers.setdefault(closed, "empty")
        hidden_missing: list[str] = []
        kept_visible: list[str] = []
        for path in self.sandbox.hidden_paths:
            real = os.path.realpath(path)
            if not os.path.lexists(real):
                hidden_missing.append(path)
            elif any(_under(c, real) for c in wanted) and any(_under(real, n) for n in needed):
                # it is, or lies inside and holds, something the program needs (the interpreter's
                # own files): hiding it would stop every run, and what is needed is not data
                kept_visible.append(path)
            else:
                covers[real] = "hidden"
        # fds to what is bound back, opened before anything covers it
        fds = {n: os.open(n, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC) for n in needed}
        try:
            mounts.mount(None, "/", None, _MS_REC | _MS_PRIVATE, None)
            covered: list[str] = []
            bound: list[str] = []
            report: dict[str, list[str]] = {"private": [], "empty": [], "hidden": []}
            for path in sorted(covers, key=lambda p: (p.count("/"), p)):
                kind = covers[path]
                if not os.path.lexists(path):
                    continue
                if any(_under(path, c) for c in covered) and not any(_under(path, b) for b in bound):
                    report[kind].append(path)  # already out of sight under a cover
                    continue
                if any(n == path for n in needed):
                    continue  # the run needs it whole (its own directory, the interpreter)
                if os.path.isdir(path):
                    data = "mode=1777" if kind == "private" else "mode=0755,size=64k"
                    mounts.mount("tmpfs", path, "tmpfs", _MS_NOSUID | _MS_NODEV, data)
                    for n in needed:
                        if _under(n, path) and n != path:
                            os.makedirs(n, 0o755, exist_ok=True)
                            mounts.mount(f"/proc/self/fd/{fds[n]}", n, None, _MS_BIND | _MS_REC, None)
                            flags = _MS_REMOUNT | _MS_BIND | _MS_NOSUID | _MS_NODEV
                            if n != run_dir:
                                flags |= _MS_RDONLY
                            mounts.mount(None, n, None, flags, None)
                            bound.append(n)
                    if kind != "private":
                        mounts.mount(
                            None, path, None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV, data
                        )
                else:
                    mounts.mount("/dev/null", path, None, _MS_BIND, None)
                covered.append(path)
                report[kind].append(path)
        finally:
            for fd in fds.values():
                os.close(fd)
        parts = [f"own mount namespace; private, empty /tmp-like directories: {', '.join(report['private'])}"]
        if report["empty"]:
            parts.append(f"emptied: {', '.join(report['empty'])}")
        if report["hidden"]:
            parts.append(f"hidden: {', '.join(report['hidden'])}")
        read_only = [b for b in bound if b != run_dir]
        if read_only:
            parts.append(f"bound back read-only: {', '.join(read_only)}")
        if hidden_missing:
            parts.append(f"hidden paths that do not exist: {', '.join(hidden_missing)}")
        if kept_visible:
            parts.append(f"hidden paths kept because memgauge needs them: {', '.join(kept_visible)}")
        try:
            # a fresh /proc that shows an unprivileged program only its own processes
            try:
                mounts.mount(
                    "proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, "hidepid=invisible"
                )
            except OSError:
                mounts.mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, "hidepid=2")
            parts.append("/proc shows the program only its own processes (hidepid)")
        except OSError as e:
            parts.append(f"other processes stay visible in /proc ({e.strerror})")
        return "; ".join(parts)

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
        self.applied["user"] = (
            f"uid {plan.uid}, gid {plan.uid}, no supplementary groups, no new privileges "
            "(setuid programs stay unprivileged); the uid is the run's alone"
        )

    def _reachable(self, uid: int) -> str:
        """Whether ``uid`` can run the program: the interpreter and memgauge must be reachable
        by it (they are not when they live under /root and no mount namespace bound them back).
        Checked in a forked child that drops to the uid: ``access`` answers for the real uid."""
        checks = [(os.path.realpath(sys.executable), os.X_OK), (self.plan.workdir, os.W_OK | os.X_OK)]
        checks += [(p, os.R_OK | os.X_OK) for p in (_memgauge_parent(), *sys.path) if p and os.path.isdir(p)]
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
        self._fsize = max(limit, MAX_FILE_BYTES)
        seen: set[tuple[int, int]] = set()
        for fd in (1, 2):
            try:
                st = os.fstat(fd)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                self._outputs.append(fd)
        files = (
            f"every file it writes at most {format_bytes(self._fsize)} (RLIMIT_FSIZE); "
            "no core dumps (RLIMIT_CORE 0)"
        )
        if self._outputs:
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
        from memgauge.runner import HardLimits

        def tighter(a: float | None, b: float | None) -> float | None:
            return b if a is None else a if b is None else min(a, b)

        memory = tighter(self.sandbox.memory_bytes, None if enforce is None else enforce.memory_bytes)
        return HardLimits(
            memory_bytes=None if memory is None else int(memory),
            wall_seconds=tighter(
                self.sandbox.wall_seconds, None if enforce is None else enforce.wall_seconds
            ),
            cpu_seconds=None if enforce is None else enforce.cpu_seconds,
        )

    def note_memory(self, group: MemoryGroup | None, group_reason: str, by_group: bool) -> None:
        self._memory_group = None if group is None else group.path
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
        self._events_dir = path
        return path

    def program_env(self) -> dict[str, str]:
        return dict(self.plan.env)

    def note_environment(self, env: dict[str, str]) -> None:
        self.applied["environment"] = (
            "scrubbed, nothing of the server's: only " + ", ".join(sorted(env)) + " (memgauge's own "
            "MEMGAUGE_* and PYTHONPATH included)"
        )

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
        if self._fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (self._fsize, self._fsize))
        uid = self.uid
        if uid is not None:
            if self._nproc is not None:
                resource.setrlimit(resource.RLIMIT_NPROC, (self._nproc, self._nproc))
            if self._libc is not None and self._libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)

    # -- while it runs

    def crossed(self) -> str | None:
        """Why the run must stop now (its output passed the limit), or None."""
        limit = self.sandbox.max_output_bytes
        if limit is None or not self._outputs:
            return None
        size = 0
        for fd in self._outputs:
            with contextlib.suppress(OSError):
                size += os.fstat(fd).st_size
        if size > limit:
            self.hit["output"] = f"stopped: its output passed {format_bytes(limit)}"
            return f"output passed the limit of {format_bytes(limit)}"
        return None

    # -- afterwards

    @contextlib.contextmanager
    def reading_as_program(self) -> Iterator[None]:
        """While the runner reads what the program left (its events, its line samples, and the
        source lines those name): with the program's file permissions, not root's. A line sample
        names any file; root reading it would put ``/etc/shadow`` or another process's
        ``/proc/PID/environ`` (the server's tokens) into the profile. ``setfsuid`` is the calling
        thread's alone, and the runner reads on this thread."""
        uid, libc = self.uid, self._libc
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

    def kill_leftovers(
        self, group: MemoryGroup | None, reap: Callable[[], None] | None = None, timeout: float = 3.0
    ) -> None:
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
            pids = set(self.pids_group.pids()) if self.pids_group is not None else set()
            pids |= set(group.pids()) if group is not None else set()
            if self.uid is not None:
                pids |= set(_pids_of_uid(self.uid))
            pids.discard(os.getpid())
            if not pids or time.monotonic() > deadline:
                return
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)

    def sanitize_events(self, path: str) -> None:
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
            self.hit["filesystem"] = (
                f"measurement files not read (links, special files, or past "
                f"{format_bytes(MAX_EVENTS_TOTAL_BYTES)} in all): {shown}"
            )

    def finish(self, profile: Profile) -> None:
        """What the run ran into, into the record, and the record into the profile."""
        if self.pids_group is not None:
            refused = self.pids_group.refused()
            if refused:
                self.hit["processes"] = (
                    f"a new process or thread was refused {refused} time(s) at the limit of "
                    f"{self.sandbox.max_processes}"
                )
        stopped = profile.exit.stopped_by or ""
        if stopped.startswith("rss") or (profile.exit.oom_killed and self.sandbox.memory_bytes is not None):
            self.hit["memory"] = stopped or "the OOM killer killed a process"
        if stopped.startswith("wall"):
            self.hit["wall"] = stopped
        if profile.exit.signal == signal.SIGXFSZ and "output" not in self.hit:
            self.hit["output"] = f"killed by SIGXFSZ: a file reached {format_bytes(self._fsize or 0)}"
        profile.environment["sandbox"] = self.record()

    def record(self) -> dict[str, Any]:
        record = empty_record()
        for name in RUNNER_PIECES:
            if name in self.applied:
                record["applied"][name] = self.applied[name]
            elif name in self.not_applied:
                record["not_applied"][name] = self.not_applied[name]
        record["hit"] = dict(self.hit)
        return record

    def close(self) -> None:
        if self.pids_group is not None:
            self.pids_group.close()
            self.pids_group = None


def _watchdog_interval() -> float:
    from memgauge.runner import HardLimits

    return HardLimits.WATCHDOG_INTERVAL
