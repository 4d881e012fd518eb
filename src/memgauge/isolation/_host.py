"""The host half of a sandboxed run (:class:`HostRun`), in the server's process: the run's fresh
directory, its leased uid, its namespaces, the unpacked upload and the scrubbed environment before
the runner starts; the record of the host's pieces, and the cleanup, afterwards."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
from typing import TYPE_CHECKING, Any

from memgauge._units import format_bytes
from memgauge.isolation._probes import namespace_ids, unshare_command, unshare_problem
from memgauge.isolation._sandbox import (
    PIECES,
    RUN_PREFIX,
    RUNNER_PIECES,
    SAFE_PATH,
    SandboxRun,
    empty_record,
    memgauge_parent,
)
from memgauge.isolation._uids import kill_uid, lease_uid, reap_unleased

if TYPE_CHECKING:
    from memgauge.isolation._sandbox import Sandbox, Upload
    from memgauge.isolation._uids import UidLease

# how long after its wall limit the job itself kills a run whose runner did not stop it
BACKSTOP_SECONDS = 10.0


def _namespaces(network: bool) -> tuple[tuple[str, ...], str]:
    """The ``unshare`` flags the host allows of those a run wants, and why not all of them."""
    flags: tuple[str, ...] = ("--mount",) if network else ("--net", "--mount")
    problem = unshare_problem(flags)
    if problem:
        # a host may allow one and not the other: take what it allows
        flags = tuple(f for f in flags if len(flags) > 1 and not unshare_problem((f,)))
    if not unshare_problem(("--ipc",)):
        # System V shared memory and message queues die with the run; no run sees another's
        flags += ("--ipc",)
    return flags, problem


def _runner_record(path: str, profile: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the runner wrote of the sandbox before the program started, or, newer, what the run's
    profile says (it has what the run hit); None where neither is there."""
    runner: dict[str, Any] | None = None
    with contextlib.suppress(OSError, ValueError), open(path) as f:
        runner = json.load(f)
    if profile is not None:
        inside = profile.get("environment", {}).get("sandbox")
        if isinstance(inside, dict):
            runner = inside
    return runner


def _chown_tree(path: str, uid: int) -> None:
    """Hand an unpacked upload to the run's uid, never following a link."""
    os.chown(path, uid, uid, follow_symlinks=False)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.chown(os.path.join(root, name), uid, uid, follow_symlinks=False)


def _remove_run_dir(path: str) -> None:
    # root removes anything regardless of modes; a directory the program made unwritable too
    shutil.rmtree(path, ignore_errors=True)


def reap_orphaned_runs(*, kill_unleased: bool = True) -> int:
    """What the runs of a memgauge killed by SIGKILL left on this host: each run directory whose
    owner is gone has what is still in its cgroups killed, the cgroups and the directory removed;
    with ``kill_unleased``, whatever runs as a sandbox uid no run leases is killed too (a daemon
    that left its process group and its environment is still in its cgroup and its uid). A server
    calls this as it starts. Returns how many run directories were reaped."""
    from memgauge.capture import orphaned_entries

    stale = orphaned_entries(tempfile.gettempdir(), RUN_PREFIX)
    for run_dir in stale:
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            _remove_cgroups(SandboxRun.load(os.path.join(run_dir, "private", "plan.json")).record_path)
        _remove_run_dir(run_dir)
    if kill_unleased:
        reap_unleased()
    return len(stale)


class HostRun:
    """The host half of one sandboxed run; ``prepare`` it, start ``command(...)`` with
    ``runner_env()`` in ``workdir``, then always ``close`` it."""

    def __init__(self, sandbox: Sandbox, job_env: dict[str, str] | None = None) -> None:
        self.sandbox = sandbox
        self.job_env = dict(job_env or {})
        self.plan: SandboxRun | None = None
        self.plan_path = ""
        self._lease: UidLease | None = None
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
        parent = tempfile.gettempdir()
        reap_orphaned_runs(kill_unleased=False)  # left by a server that was killed
        run_dir = tempfile.mkdtemp(prefix=f"{RUN_PREFIX}{os.getpid()}-", dir=parent)
        # 0711: the program's uid may pass through to its own directories, not list the others
        os.chmod(run_dir, 0o711)
        sandbox = self.sandbox
        uid, user_reason = self._user()
        paths = {name: os.path.join(run_dir, name) for name in ("work", "home", "tmp", "private")}
        for name, path in paths.items():
            os.mkdir(path, 0o700)
            if uid is not None and name != "private":
                os.chown(path, uid, uid)
        flags, problem = _namespaces(sandbox.network)
        if flags:
            exe = unshare_command()
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
        env = {**base, "PYTHONPATH": memgauge_parent(), **self.job_env, **sandbox.env}
        if "PYTHONPATH" in self.job_env or "PYTHONPATH" in sandbox.env:
            # theirs after memgauge's: the program's bootstrap must import memgauge
            env["PYTHONPATH"] = memgauge_parent() + os.pathsep + env["PYTHONPATH"]
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
            host_namespaces=namespace_ids(),
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

    def _user(self) -> tuple[int | None, str]:
        """The uid the run gets (a leased one, where asked and memgauge is root), or why none."""
        if not self.sandbox.unprivileged:
            return None, "not asked for (unprivileged=False)"
        if os.geteuid() != 0:
            return None, f"memgauge runs as uid {os.geteuid()}, not root: it cannot switch users"
        self._lease, user_reason = lease_uid()
        return (self._lease.uid if self._lease is not None else None), user_reason

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
        env["PYTHONPATH"] = memgauge_parent()
        from memgauge._env import ENV_CGROUP_ROOT

        if os.environ.get(ENV_CGROUP_ROOT):
            # the server's own choice of cgroup tree (docs/hosts.md): the runner makes the run's
            # groups, and must make them where the server removes them
            env[ENV_CGROUP_ROOT] = os.environ[ENV_CGROUP_ROOT]
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
        runner = _runner_record(plan.record_path, profile)
        for name in RUNNER_PIECES:
            if runner is not None and name in runner.get("applied", {}):
                record["applied"][name] = runner["applied"][name]
            elif runner is not None and name in runner.get("not_applied", {}):
                record["not_applied"][name] = runner["not_applied"][name]
            else:
                record["not_applied"][name] = why_not
        if runner is not None:
            record["hit"].update(runner.get("hit", {}))
            for figures in ("disk", "runner"):  # what the run wrote, what measuring it cost
                if isinstance(runner.get(figures), dict):
                    record[figures] = dict(runner[figures])
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
                _remove_cgroups(self.plan.record_path)
                _remove_run_dir(self.plan.run_dir)
        finally:
            if self._lease is not None:
                self._lease.release()
                self._lease = None


def _remove_cgroups(record_path: str) -> None:
    """Empty (SIGKILL) and remove the cgroups a run's record names."""
    try:
        with open(record_path) as f:
            groups = json.load(f).get("cgroups", [])
    except (OSError, ValueError, AttributeError):
        return
    from memgauge.watcher import PREFIX, PidsGroup, current_host

    host = current_host()
    for path in groups:
        real = os.path.realpath(str(path))
        # only a group memgauge made: the file is the runner's, but a program left as root
        # could have rewritten it
        ours = host.holds(real) and os.path.basename(real).startswith(PREFIX)
        if ours and os.path.isdir(real):
            # any cgroup, memory or pids: kill what is in it, then remove it
            PidsGroup(real, 1).close()
