"""A job: one isolated, measured run of a program, and how it is executed on whatever machine an
engine placed it.

A job runs ``python -m memgauge run`` in a fresh child process, so every run has its own process
tree, cgroup, sampler and peak: nothing of one run (allocator pools, page cache charged to a
cgroup, a leaked thread) reaches the next. The job's result carries the profile as plain data, so
it crosses process and machine boundaries (Ray) unchanged.
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

from memgauge._files import read_json_object

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
    the run is killed after it, and the result says so."""

    id: str
    target: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    run_options: tuple[str, ...] = ()
    resources: Resources = field(default_factory=Resources)
    timeout_seconds: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Job:
        data = dict(data)
        data["target"] = tuple(data["target"])
        data["run_options"] = tuple(data.get("run_options", ()))
        data["resources"] = Resources(**data.get("resources", {}))
        return cls(**data)


@dataclass
class JobResult:
    """``profile``: the run's profile (``Profile.to_dict()``), None when memgauge could not measure
    it; ``error``: why not, or why the job was stopped (timeout, cancelled); ``exit_code``: the
    exit status of ``memgauge run`` (the program's own when it ran)."""

    job_id: str
    profile: dict[str, Any] | None
    error: str | None
    exit_code: int | None
    output_tail: str = ""
    host: str = ""
    seconds: float = 0.0
    cancelled: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JobResult:
        return cls(**data)


def job_command(job: Job, profile_path: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "memgauge",
        "run",
        "--quiet",
        "--json",
        profile_path,
        *job.run_options,
        *job.target,
    ]


def execute_job(job: Job, cancel: threading.Event | None = None) -> JobResult:
    """Run ``job`` here, to the end (or its timeout, or ``cancel``), and return its result. Never
    raises for anything the job did; the result says what happened."""
    start = time.monotonic()
    host = socket.gethostname()
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
