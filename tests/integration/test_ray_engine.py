"""The Ray engine against a real local Ray cluster (a head started with ``ray start``, as a user
would), running real ``memgauge run`` child processes: the same measurements as the local engine,
concurrency caps, cancellation that leaves nothing behind, failures as results.

Without Ray these tests skip, unless MEMGAUGE_REQUIRE_RAY=1 (CI sets it), which makes a missing
Ray a failure.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memgauge._errors import UsageError
from memgauge.sweep import LocalEngine, make_engine
from memgauge.sweep._job import Job, JobResult, Resources
from tests.conftest import MIB, PROGRAMS

if os.environ.get("MEMGAUGE_REQUIRE_RAY") == "1":
    import ray  # CI installs Ray: a missing one fails here instead of skipping
else:
    ray = pytest.importorskip("ray")

from memgauge.sweep._ray import RayEngine, _failure

STAMP = PROGRAMS / "stamp.py"
pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _session_pids(sid: int) -> list[int]:
    """The live processes of session ``sid`` (everything ``ray start`` left running)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": state ppid pgrp session
        if fields[0] != "Z" and int(fields[3]) == sid:
            pids.append(int(entry))
    return pids


def _processes_with(text: str) -> list[int]:
    """Live processes whose command line contains ``text``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(int(entry))
    return found


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    """A one-node Ray cluster (2 CPUs) in its own session, on a free port (6379 may be taken) and
    its own temp dir, without token authentication; stopped by killing that session only, not by
    the machine-wide ``ray stop``."""
    port = _free_port()
    temp_dir = tempfile.mkdtemp(prefix="mg-ray-")  # short: Ray's socket paths live under it
    saved_mode = os.environ.get("RAY_AUTH_MODE")
    os.environ["RAY_AUTH_MODE"] = "disabled"  # the driver (this process) must agree with the head
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    ray_cli = Path(sys.executable).parent / "ray"
    head = subprocess.Popen(
        [
            str(ray_cli),
            "start",
            "--head",
            f"--port={port}",
            "--num-cpus=2",
            "--include-dashboard=false",
            "--disable-usage-stats",
            f"--temp-dir={temp_dir}",
        ],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = head.communicate(timeout=120)
        assert head.returncode == 0, f"ray start failed:\n{out[-3000:]}"
        yield f"127.0.0.1:{port}"
    finally:
        if head.poll() is None:
            head.kill()
        for sig, grace in ((signal.SIGTERM, 1.0), (signal.SIGKILL, 5.0)):
            for pid in _session_pids(head.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + grace
            while _session_pids(head.pid) and time.monotonic() < deadline:
                time.sleep(0.1)
        left = _session_pids(head.pid)
        shutil.rmtree(temp_dir, ignore_errors=True)
        if saved_mode is None:
            os.environ.pop("RAY_AUTH_MODE", None)
        else:
            os.environ["RAY_AUTH_MODE"] = saved_mode
        assert not left, f"Ray processes left running: {left}"


def _stamp_job(job_id: str, tmp_path: Path, seconds: float) -> Job:
    return Job(
        job_id,
        (str(STAMP), str(tmp_path / f"{job_id}.stamp")),
        env={"STAMP_SECONDS": str(seconds)},
        cwd=str(tmp_path),
    )


def _stamp(tmp_path: Path, job_id: str) -> tuple[int, float, float, str]:
    pid, start, end, cwd = (tmp_path / f"{job_id}.stamp").read_text().split(maxsplit=3)
    return int(pid), float(start), float(end), cwd.strip()


def test_peak_matches_the_local_engine(ray_address: str, tmp_path: Path) -> None:
    job = Job("spike", (str(PROGRAMS / "spike.py"),), env={"SPIKE_MIB": "200"}, cwd=str(tmp_path))
    with LocalEngine() as local:
        here = local.submit(job).future.result(timeout=120)
    with RayEngine(ray_address) as engine:
        assert engine.name == "ray"
        there = engine.submit(job).future.result(timeout=120)
    for result in (here, there):
        assert result.error is None, result.output_tail
        assert result.exit_code == 0
        assert result.profile is not None
        assert result.profile["peak"]["resident_bytes"] >= 200 * MIB
    assert there.host
    assert there.job_id == "spike"
    assert not there.cancelled
    peak_here = here.profile["peak"]["resident_bytes"]  # type: ignore[index]
    peak_there = there.profile["peak"]["resident_bytes"]  # type: ignore[index]
    assert abs(peak_there - peak_here) <= 0.10 * peak_here, (peak_here, peak_there)


def test_jobs_at_once_all_complete_in_their_cwd(ray_address: str, tmp_path: Path) -> None:
    jobs = [_stamp_job(f"j{i}", tmp_path, 1.5) for i in range(4)]
    with RayEngine(ray_address) as engine:
        assert engine.concurrency is None
        handles = [engine.submit(job) for job in jobs]
        results = [handle.future.result(timeout=120) for handle in handles]
    assert [r.job_id for r in results] == [job.id for job in jobs]
    for result in results:
        assert (result.error, result.exit_code) == (None, 0), result.output_tail
        assert result.profile is not None
    spans = sorted(_stamp(tmp_path, job.id)[1:3] for job in jobs)
    assert all(_stamp(tmp_path, job.id)[3] == str(tmp_path) for job in jobs)
    # 2 CPUs, 1 CPU a job: Ray runs two at a time
    assert any(later[0] < earlier[1] for earlier, later in itertools.pairwise(spans)), spans


def test_concurrency_one_never_overlaps(ray_address: str, tmp_path: Path) -> None:
    jobs = [_stamp_job(f"s{i}", tmp_path, 0.5) for i in range(3)]
    with RayEngine(ray_address, concurrency=1) as engine:
        handles = [engine.submit(job) for job in jobs]
        results = [handle.future.result(timeout=120) for handle in handles]
    assert all(r.error is None and r.exit_code == 0 for r in results), results
    spans = sorted(_stamp(tmp_path, job.id)[1:3] for job in jobs)
    for earlier, later in itertools.pairwise(spans):
        assert later[0] >= earlier[1], spans


def test_cancel_stops_the_run_and_leaves_nothing(ray_address: str, tmp_path: Path) -> None:
    job = _stamp_job("sleeper", tmp_path, 60)
    stamp = tmp_path / "sleeper.stamp"
    with RayEngine(ray_address) as engine:
        handle = engine.submit(job)
        deadline = time.monotonic() + 30
        while not stamp.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert stamp.exists(), "the program never started"
        assert _processes_with(str(stamp))
        start = time.monotonic()
        handle.cancel()
        result = handle.future.result(timeout=15)
        assert time.monotonic() - start < 15
        assert result.cancelled
        assert result.error is not None
        assert "cancelled" in result.error
        # the task stops the run on the node (SIGTERM, then the run's process group)
        deadline = time.monotonic() + 10
        while _processes_with(str(stamp)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _processes_with(str(stamp))


def test_cancel_of_a_queued_job_never_runs_it(ray_address: str, tmp_path: Path) -> None:
    with RayEngine(ray_address, concurrency=1) as engine:
        first = engine.submit(_stamp_job("first", tmp_path, 0.5))
        queued = engine.submit(_stamp_job("queued", tmp_path, 0.5))
        queued.cancel()
        assert queued.future.result(timeout=15).cancelled
        assert first.future.result(timeout=60).error is None
    assert not (tmp_path / "queued.stamp").exists()


def test_missing_script_is_a_result(ray_address: str, tmp_path: Path) -> None:
    job = Job("missing", (str(tmp_path / "no_such_script.py"),), cwd=str(tmp_path))
    with RayEngine(ray_address) as engine:
        result = engine.submit(job).future.result(timeout=60)
    assert result.profile is None
    assert result.error is not None
    assert "no_such_script.py" in result.error
    assert not result.cancelled


def test_impossible_resources_are_a_result(ray_address: str, tmp_path: Path) -> None:
    job = Job("bad", (str(STAMP), str(tmp_path / "bad.stamp")), resources=Resources(cpus=-1))
    engine = make_engine("ray", address=ray_address)
    try:
        result = engine.submit(job).future.result(timeout=30)
    finally:
        engine.close()
    assert result.error is not None
    assert result.error.startswith("ray could not submit the job")


def test_a_crashed_worker_is_described() -> None:
    error = _failure(Job("x", ("p.py",)), ray.exceptions.WorkerCrashedError())
    assert error.startswith("ray task failed: WorkerCrashedError")
    assert "\n" not in error


def test_bad_address_is_a_usage_error() -> None:
    start = time.monotonic()
    with pytest.raises(UsageError, match=r"cannot connect to the Ray cluster at 127\.0\.0\.1:"):
        RayEngine(f"127.0.0.1:{_free_port()}")
    assert time.monotonic() - start < 15
    assert not ray.is_initialized()


def test_without_ray_a_usage_error_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    with pytest.raises(UsageError, match=r"pip install 'memgauge\[ray\]'"):
        RayEngine()


def test_results_are_plain_data() -> None:
    result = JobResult("x", {"peak": {"resident_bytes": 1}}, None, 0, host="h")
    assert JobResult.from_dict(result.to_dict()) == result


def test_sweep_on_ray_gives_the_local_engine_results(ray_address: str, tmp_path: Path) -> None:
    """The same sweep through `--engine ray` and the local engine: same points, same laws, peaks
    within 10% of each other."""
    from tests.integration.test_sweep_cli import GROWTH, law, sweep

    args = [str(GROWTH), "--param", "N=20,40,80", "--no-json", "--no-lines", "-q"]
    local_proc, local = sweep(args, tmp_path)
    ray_proc, on_ray = sweep([*args, "--engine", "ray", "--address", ray_address], tmp_path)
    assert local_proc.returncode == 0, local_proc.stderr
    assert ray_proc.returncode == 0, ray_proc.stderr
    assert local is not None and on_ray is not None
    assert on_ray["engine"] == "ray" and local["engine"] == "local"
    assert [p["params"] for p in on_ray["points"]] == [p["params"] for p in local["points"]]
    for a, b in zip(local["points"], on_ray["points"], strict=True):
        ra, rb = a["runs"][0], b["runs"][0]
        assert ra["ok"] and rb["ok"] and rb["host"]
        assert abs(ra["rss_bytes"] - rb["rss_bytes"]) <= 0.10 * ra["rss_bytes"], (
            ra["rss_bytes"],
            rb["rss_bytes"],
        )
        assert ra["metrics"] == rb["metrics"]
    assert law(on_ray, "rss")["law"] == law(local, "rss")["law"] == "linear"
