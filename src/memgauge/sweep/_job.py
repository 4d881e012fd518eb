"""A job: one isolated, measured run of a program, and how it is executed on whatever machine an
engine placed it.

A job runs ``python -m memgauge run`` in a fresh child process, so every run has its own process
tree, cgroup, sampler and peak: nothing of one run (allocator pools, page cache charged to a
cgroup, a leaked thread) reaches the next. The job's result carries the profile as plain data, so
it crosses process and machine boundaries (Ray) unchanged.

A job with a ``sandbox`` runs untrusted code (the validation service's): its upload is unpacked in
a fresh directory and run there in its own namespaces, as an unprivileged uid, with its limits
enforced and nothing of the server's environment (``memgauge.isolation``); the result records which
of those pieces this host could apply.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from memgauge._errors import MemgaugeError
from memgauge._files import read_json_object
from memgauge.isolation import MAX_PROFILE_BYTES, HostRun, Sandbox, Upload

# how much of the program's output a result keeps (the end: where the traceback is)
OUTPUT_TAIL_BYTES = 4096


@dataclass(frozen=True)
class Resources:
    """What a job needs of the machine it runs on; engines that place work (Ray) use it."""

    cpus: float = 1.0
    gpus: float = 0.0
    memory_bytes: int | None = None


@dataclass(frozen=True)
class Job:
    """``target``: what follows ``memgauge run`` options (``["prog.py", "--rows", "100"]``,
    ``["-m", "module"]``, ``["--", "command", ...]``). ``env``: added to the environment the job
    inherits. ``run_options``: ``memgauge run`` options (``["--no-lines"]``). ``timeout_seconds``:
    the run is killed after it, and the result says so. ``sandbox``: run sandboxed, ``upload``
    unpacked into a fresh working directory (``target`` is relative to it, ``cwd`` is not used, and
    ``env`` is added to a scrubbed environment instead of the inherited one)."""

    id: str
    target: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    run_options: tuple[str, ...] = ()
    resources: Resources = field(default_factory=Resources)
    timeout_seconds: float | None = None
    sandbox: Sandbox | None = None
    upload: Upload | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["sandbox"] = None if self.sandbox is None else self.sandbox.to_dict()
        data["upload"] = None if self.upload is None else self.upload.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Job:
        data = dict(data)
        data["target"] = tuple(data["target"])
        data["run_options"] = tuple(data.get("run_options", ()))
        data["resources"] = Resources(**data.get("resources", {}))
        sandbox, upload = data.get("sandbox"), data.get("upload")
        data["sandbox"] = None if sandbox is None else Sandbox.from_dict(sandbox)
        data["upload"] = None if upload is None else Upload.from_dict(upload)
        return cls(**data)


@dataclass
class JobResult:
    """``profile``: the run's profile (``Profile.to_dict()``), None when memgauge could not measure
    it; ``error``: why not, or why the job was stopped (timeout, cancelled, output limit);
    ``exit_code``: the exit status of ``memgauge run`` (the program's own when it ran);
    ``sandbox``: for a sandboxed job, ``{"applied": {piece: detail}, "not_applied": {piece:
    reason}, "hit": {piece: what the run ran into}}`` over ``memgauge.isolation.PIECES``."""

    job_id: str
    profile: dict[str, Any] | None
    error: str | None
    exit_code: int | None
    output_tail: str = ""
    host: str = ""
    seconds: float = 0.0
    cancelled: bool = False
    sandbox: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JobResult:
        return cls(**data)


def job_command(job: Job, profile_path: str, sandbox_plan: str | None = None) -> list[str]:
    return [
        sys.executable,
        "-m",
        "memgauge",
        "run",
        "--quiet",
        "--json",
        profile_path,
        *([] if sandbox_plan is None else ["--sandbox", sandbox_plan]),
        *job.run_options,
        *job.target,
    ]


def execute_job(job: Job, cancel: threading.Event | None = None) -> JobResult:
    """Run ``job`` here, to the end (or its timeout, or ``cancel``), and return its result. Never
    raises for anything the job did; the result says what happened."""
    start = time.monotonic()
    host = socket.gethostname()
    if job.sandbox is not None:
        return _execute_sandboxed(job, job.sandbox, cancel, start, host)
    with tempfile.TemporaryDirectory(prefix="memgauge-job-") as tmp:
        profile_path = os.path.join(tmp, "profile.json")
        output_path = os.path.join(tmp, "output.log")
        env = {**os.environ, **job.env}
        with open(output_path, "wb") as out:
            try:
                proc = subprocess.Popen(
                    job_command(job, profile_path),
                    cwd=job.cwd,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    # its own session: a timeout or a cancel kills the whole run, and a terminal's
                    # Ctrl-C reaches the sweep, which stops its jobs itself
                    start_new_session=True,
                )
            except OSError as e:
                return JobResult(job.id, None, f"cannot start memgauge: {e}", None, host=host)
            stopped = _wait(proc, job.timeout_seconds, cancel)
        tail = _tail(output_path)
        seconds = time.monotonic() - start
        profile = read_json_object(profile_path)
        code = proc.returncode
        if stopped is not None:
            return JobResult(
                job.id, profile, stopped, code, tail, host, seconds, cancelled=stopped == "cancelled"
            )
        if profile is None:
            message = _last_line(tail) or f"memgauge run exited with {code} and wrote no profile"
            return JobResult(job.id, None, message, code, tail, host, seconds)
        return JobResult(job.id, profile, None, code, tail, host, seconds)


def _execute_sandboxed(
    job: Job, sandbox: Sandbox, cancel: threading.Event | None, start: float, host: str
) -> JobResult:
    """``execute_job`` for a sandboxed job: the same run, inside ``HostRun``'s directory, uid and
    namespaces, which are always taken down again."""
    run = HostRun(sandbox, job.env)
    try:
        try:
            run.prepare(job.upload, job.timeout_seconds)
        except MemgaugeError as e:  # the upload cannot be unpacked: the uploader's to fix
            why = "not run: the upload was refused"
            return JobResult(
                job.id,
                None,
                e.message,
                None,
                host=host,
                seconds=time.monotonic() - start,
                sandbox=run.record(None, 0, why, started=False),
            )
        except OSError as e:
            why = f"not run: the sandbox could not be made ({e})"
            return JobResult(
                job.id,
                None,
                why,
                None,
                host=host,
                seconds=time.monotonic() - start,
                sandbox=run.record(None, 0, why, started=False),
            )
        profile_path = os.path.join(run.private, "profile.json")
        output_path = os.path.join(run.private, "output.log")
        command = run.command(job_command(job, profile_path, run.plan_path))
        with open(output_path, "wb") as out:
            try:
                proc = subprocess.Popen(
                    command,
                    cwd=run.workdir,
                    env=run.runner_env(),
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            except OSError as e:
                why = f"cannot start memgauge: {e}"
                return JobResult(
                    job.id, None, why, None, host=host, sandbox=run.record(None, 0, why, started=False)
                )
            stopped = _wait(proc, run.timeout(), cancel)
        tail = _tail(output_path)
        output_bytes = os.path.getsize(output_path)
        seconds = time.monotonic() - start
        too_big = _size(profile_path) > MAX_PROFILE_BYTES
        profile = None if too_big else read_json_object(profile_path)
        code = proc.returncode
        why_not = "memgauge run stopped before it set this up: " + (
            _last_line(tail) or f"it exited with {code}"
        )
        record = run.record(profile, output_bytes, why_not)
        error = stopped or run.output_error(output_bytes, profile)
        if too_big and error is None:
            # what the program wrote of its own measurements made it so: not measured, not lost
            error = f"the run's profile is over {MAX_PROFILE_BYTES >> 20} MiB: not kept"
            record["hit"]["filesystem"] = error
        if error is None and profile is None:
            error = _last_line(tail) or f"memgauge run exited with {code} and wrote no profile"
        return JobResult(
            job.id,
            profile,
            error,
            code,
            tail,
            host,
            seconds,
            cancelled=stopped == "cancelled",
            sandbox=record,
        )
    finally:
        run.close()


def _wait(proc: subprocess.Popen[bytes], timeout: float | None, cancel: threading.Event | None) -> str | None:
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        step = 0.05 if cancel is not None else 1.0
        if deadline is not None:
            step = max(0.0, min(step, deadline - time.monotonic()))
        try:
            proc.wait(step)
            return None
        except subprocess.TimeoutExpired:
            pass
        reason = None
        if cancel is not None and cancel.is_set():
            reason = "cancelled"
        elif deadline is not None and time.monotonic() >= deadline:
            reason = f"stopped after the job's time limit of {timeout:g} s"
        if reason is not None:
            _stop(proc)
            return reason


def _stop(proc: subprocess.Popen[bytes]) -> None:
    # SIGTERM to memgauge run, which forwards it and still writes the profile; then SIGKILL to all
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _tail(path: str) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - OUTPUT_TAIL_BYTES))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""
