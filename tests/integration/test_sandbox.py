"""Sandboxed jobs (``memgauge.isolation`` through ``execute_job``) with real child processes: a run
within its limits is measured as any other (peak, line attribution), a run past a limit is stopped
and says which, and a run cannot reach the network, the server's files and environment, or another
run. Pieces a host cannot provide are recorded as not applied; the tests that need a piece skip,
with the reason, where the host lacks it (not root, no ``unshare``).
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import io
import json
import os
import shutil
import sys
import tempfile
import time
import uuid
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from memgauge.isolation import PIECES, Sandbox, Upload
from memgauge.isolation._mounts import _closed_ancestor
from memgauge.isolation._probes import PROBES, unshare_problem
from memgauge.isolation._sandbox import RUN_PREFIX
from memgauge.isolation._uids import UID_FIRST, UID_LAST, pids_of_uid, uid_lock_path
from memgauge.sweep import Job, JobResult, execute_job
from tests.conftest import MIB, PROGRAMS, marker

ROOT = sys.platform == "linux" and os.geteuid() == 0
NAMESPACE_PROBLEM = unshare_problem(("--net", "--mount")) if sys.platform == "linux" else "not Linux"

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox is Linux-only")
needs_root = pytest.mark.skipif(not ROOT, reason="the uid switch, the mounts and the cgroups need root")
needs_namespaces = pytest.mark.skipif(
    bool(NAMESPACE_PROBLEM), reason=f"no network and mount namespaces here: {NAMESPACE_PROBLEM}"
)
SECRET = "MEMGAUGE_TEST_SERVER_SECRET"


def upload(name: str) -> Upload:
    return Upload("main.py", (PROGRAMS / f"sandbox_{name}.py").read_bytes())


def run(name: str, *args: str, **limits: Any) -> JobResult:
    job = Job(f"sandbox-{name}", ("main.py", *args), sandbox=Sandbox(**limits), upload=upload(name))
    return execute_job(job)


def last_json(result: JobResult) -> dict[str, Any]:
    line = result.output_tail.strip().splitlines()[-1]
    data: dict[str, Any] = json.loads(line)
    return data


def uid_lock_is_free(uid: int) -> bool:
    try:
        fd = os.open(uid_lock_path(uid), os.O_RDWR)
    except FileNotFoundError:
        return True  # removed on release
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def processes_of(uid: int) -> list[int]:
    return pids_of_uid(uid)


def assert_names_every_piece(record: dict[str, Any] | None) -> None:
    assert record is not None
    assert set(record["applied"]) | set(record["not_applied"]) == set(PIECES)
    assert not set(record["applied"]) & set(record["not_applied"])
    assert all(
        isinstance(v, str) and v for v in [*record["applied"].values(), *record["not_applied"].values()]
    )


# -- one run within its limits, probed from inside --------------------------------------------------


@pytest.fixture(scope="module")
def probe() -> Iterator[tuple[JobResult, dict[str, Any], dict[str, str]]]:
    """One sandboxed probe run, with a secret in the server's environment, a hidden data
    directory outside /tmp (world-readable: only the sandbox hides it) and a root-only file."""
    files: dict[str, str] = {}
    hidden_dir = None
    with contextlib.suppress(OSError):
        hidden_dir = tempfile.mkdtemp(prefix="memgauge-test-data-", dir="/var/lib")
        os.chmod(hidden_dir, 0o755)
        files["hidden"] = os.path.join(hidden_dir, "data.csv")
        Path(files["hidden"]).write_text("secret data\n")
        os.chmod(files["hidden"], 0o644)
    root_only = None
    if ROOT and os.path.isdir("/root"):
        fd, root_only = tempfile.mkstemp(prefix=".memgauge-test-history-", dir="/root")
        os.write(fd, b"secret\n")
        os.close(fd)
        os.chmod(root_only, 0o600)
        files["root_only"] = root_only
    files["shadow"] = "/etc/shadow"
    sandbox = Sandbox(
        memory_bytes=512 * MIB,
        wall_seconds=60,
        disk_bytes=64 * MIB,
        hidden_paths=(hidden_dir,) if hidden_dir else (),
        env={"SANDBOX_GIVEN": "1"},
    )
    job = Job("probe", ("main.py", *files.values()), sandbox=sandbox, upload=upload("probe"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(SECRET, "hunter2")
        result = execute_job(job)
    try:
        assert result.error is None, result.output_tail
        yield result, last_json(result), files
    finally:
        if hidden_dir:
            shutil.rmtree(hidden_dir, ignore_errors=True)
        if root_only:
            os.unlink(root_only)


def test_run_within_limits_is_measured_with_line_attribution(probe: Any) -> None:
    result, report, _ = probe
    assert result.exit_code == 0
    assert report["held_mib"] == 100
    peak = result.profile["peak"]
    assert 90 * MIB <= peak["resident_bytes"] <= 140 * MIB
    line = marker(PROGRAMS / "sandbox_probe.py", "hold")
    top = next(a for a in peak["attribution"] if not a["file"].startswith("<"))
    assert (os.path.basename(top["file"]), top["line"]) == ("main.py", line)
    assert top["bytes"] >= 90 * MIB
    assert result.profile["exit"]["stopped_by"] is None


def test_record_names_every_piece(probe: Any) -> None:
    result, _, _ = probe
    assert_names_every_piece(result.sandbox)
    assert result.profile["environment"]["sandbox"]["applied"].keys() <= set(PIECES)


@needs_root
@needs_namespaces
def test_with_root_and_namespaces_every_piece_is_applied(probe: Any) -> None:
    result, _, _ = probe
    assert result.sandbox["not_applied"] == {}, result.sandbox["not_applied"]
    assert "pids.max" in result.sandbox["applied"]["processes"]


def test_environment_is_scrubbed(probe: Any) -> None:
    _, report, _ = probe
    env = report["env"]
    assert SECRET not in env
    assert env["SANDBOX_GIVEN"] == "1"
    assert env["LANG"] == "C.UTF-8" and env["PYTHONUNBUFFERED"] == "1"
    assert env["HOME"] != os.environ.get("HOME") and env["TMPDIR"].endswith("/tmp")
    assert set(env) <= {
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "PYTHONUNBUFFERED",
        "PYTHONPATH",
        "SANDBOX_GIVEN",
    } | {k for k in env if k.startswith("MEMGAUGE_")}
    assert report["cwd_files"] == ["main.py"]  # the fresh workdir holds only the upload


@needs_root
def test_program_runs_as_its_own_uid_and_lets_it_go(probe: Any) -> None:
    result, report, _ = probe
    uid = report["uid"]
    assert "user" in result.sandbox["applied"]
    assert uid != 0 and UID_FIRST <= uid <= UID_LAST
    assert report["gid"] == uid and report["groups"] == []
    assert uid_lock_is_free(uid)
    assert processes_of(uid) == []


def test_workdir_is_removed(probe: Any) -> None:
    _, report, _ = probe
    assert not os.path.exists(report["cwd"])
    assert not os.path.exists(os.path.dirname(report["cwd"]))


@needs_root
@needs_namespaces
def test_network_is_unreachable(probe: Any) -> None:
    _, report, _ = probe
    for key in ("tcp_postgres", "tcp_remote", "unix_postgres", "resolve"):
        assert report[key] != "ok", key


@needs_root
@needs_namespaces
def test_files_outside_the_run_cannot_be_read(probe: Any) -> None:
    _, report, files = probe
    for name, path in files.items():
        assert report["reads"][path].startswith(("FileNotFoundError", "PermissionError")), name
    assert "hidden" in files and "root_only" in files
    # a private /tmp: only this run's own directory is there
    assert [t for t in report["tmp"] if t.startswith(RUN_PREFIX)] == [
        os.path.basename(os.path.dirname(report["cwd"]))
    ]
    assert report["visible_pids"] < 10  # /proc shows it only its own processes


# -- limits ----------------------------------------------------------------------------------------


@needs_root
def test_memory_limit_stops_the_run() -> None:
    result = run("grow", memory_bytes=150 * MIB)
    assert result.profile is not None, result.output_tail
    assert "survived" not in result.output_tail
    exit_ = result.profile["exit"]
    assert exit_["stopped_by"] or exit_["oom_killed"]
    assert "memory" in result.sandbox["hit"]
    assert result.profile["peak"]["resident_bytes"] <= 200 * MIB


def test_wall_limit_stops_the_run_near_it() -> None:
    result = run("sleep", wall_seconds=1.5)
    assert result.profile is not None, result.output_tail
    assert result.profile["exit"]["stopped_by"].startswith("wall")
    assert 1.4 <= result.profile["wall_seconds"] <= 2.2
    assert result.seconds < 6
    assert "wall" in result.sandbox["hit"]


@needs_root
def test_fork_bomb_is_held_by_the_process_limit() -> None:
    start = time.monotonic()
    result = run("forkbomb", wall_seconds=2, max_processes=32)
    assert time.monotonic() - start < 10
    assert result.profile is not None, result.output_tail
    assert result.profile["exit"]["stopped_by"].startswith("wall")
    assert "refused" in result.sandbox["hit"]["processes"]
    # never more than the limit at once, and nothing of it is left
    assert len(result.profile["processes"]) < 200
    uid = int(result.output_tail.split()[0])
    assert processes_of(uid) == []
    assert uid_lock_is_free(uid)


@needs_root
def test_threads_past_the_process_limit_are_refused() -> None:
    result = run("threads", max_processes=64)
    assert result.error is None, result.output_tail
    started = int(result.output_tail.strip().splitlines()[-1])
    assert started < 64
    assert "refused" in result.output_tail
    assert "processes" in result.sandbox["hit"]


def test_output_limit_stops_the_run() -> None:
    result = run("flood", wall_seconds=30)
    assert result.error == "stopped: output passed the limit of 1.0 MiB"
    assert result.seconds < 10
    assert result.profile is not None  # kept
    assert result.profile["exit"]["stopped_by"].startswith("output passed")
    assert "output" in result.sandbox["hit"]


@needs_root
def test_daemons_die_with_the_run() -> None:
    result = run("daemon", wall_seconds=30)
    assert result.error is None, result.output_tail
    assert result.seconds < 8  # not the daemon's 60 s
    uid = int(result.output_tail.split()[0])
    assert uid != 0
    assert processes_of(uid) == []


@needs_root
def test_runner_reads_no_link_or_fifo_the_program_left_in_its_events() -> None:
    result = run("events_trap", wall_seconds=20)  # a runner that hangs fails, not the suite
    assert result.error is None, result.output_tail
    assert "planted" in result.output_tail
    text = json.dumps(result.profile)
    assert "root:" not in text  # nothing of /etc/shadow
    assert "not read" in result.sandbox["hit"]["filesystem"]
    # the program's own line sampling is still read
    assert any(a["file"].endswith("main.py") for a in result.profile["peak"]["attribution"])


# -- runs at once ----------------------------------------------------------------------------------


@needs_root
@needs_namespaces
def test_a_run_cannot_read_another_runs_workdir() -> None:
    token = uuid.uuid4().hex
    peer = upload("peer")
    sandbox = Sandbox(wall_seconds=30)
    with ThreadPoolExecutor(2) as pool:
        writer = pool.submit(
            execute_job, Job("writer", ("main.py", "write", token), sandbox=sandbox, upload=peer)
        )
        path = None
        deadline = time.monotonic() + 15
        while path is None and time.monotonic() < deadline and not writer.done():
            for candidate in glob.glob(
                os.path.join(tempfile.gettempdir(), "memgauge-sandbox-*/work/marker.txt")
            ):
                with contextlib.suppress(OSError), open(candidate) as f:
                    if f.read() == token:
                        path = candidate
            time.sleep(0.02)
        assert path is not None, "the writer never wrote its marker"
        try:
            reader = execute_job(Job("reader", ("main.py", "read", path), sandbox=sandbox, upload=peer))
        finally:
            os.unlink(path)  # lets the writer finish
        wrote = writer.result()
    assert wrote.error is None, wrote.output_tail
    report = last_json(reader)
    assert report["read"].startswith(("FileNotFoundError", "PermissionError")), report
    writer_dir = os.path.basename(os.path.dirname(os.path.dirname(path)))
    assert writer_dir not in report["tmp"]
    assert report["uid"] != last_json(wrote)["uid"]


# -- hosts without a piece, refused uploads, archives ------------------------------------------------


@needs_root
def test_without_namespaces_the_run_goes_ahead_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    for flags in (("--net", "--mount"), ("--net",), ("--mount",)):
        monkeypatch.setitem(PROBES, flags, "disabled by the test")
    monkeypatch.setenv(SECRET, "hunter2")
    result = run("probe")
    assert result.error is None, result.output_tail
    assert_names_every_piece(result.sandbox)
    not_applied = result.sandbox["not_applied"]
    assert not_applied["network"] == not_applied["filesystem"] == "disabled by the test"
    report = last_json(result)
    assert SECRET not in report["env"]
    interpreter_closed = _closed_ancestor(os.path.realpath(sys.executable)) is not None
    if interpreter_closed:
        # the trap: an unprivileged uid cannot even reach the interpreter, so the program runs as
        # root, and the record says why
        assert "cannot reach" in not_applied["user"]
        assert report["uid"] == 0
    else:
        assert report["uid"] != 0


def test_refused_upload_is_a_failed_result() -> None:
    job = Job("bad", ("main.py",), sandbox=Sandbox(), upload=Upload("evil.exe", b"MZ\x90\x00"))
    result = execute_job(job)
    assert result.profile is None
    assert result.error is not None and "not an accepted upload" in result.error
    assert_names_every_piece(result.sandbox)
    assert glob.glob(os.path.join(tempfile.gettempdir(), f"{RUN_PREFIX}{os.getpid()}-*")) == []


def test_archive_upload_runs_with_its_package() -> None:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as z:
        z.writestr("main.py", "from pkg.helper import answer\nprint(answer())\n")
        z.writestr("pkg/__init__.py", "")
        z.writestr("pkg/helper.py", "def answer():\n    return 42\n")
    job = Job("zip", ("main.py",), sandbox=Sandbox(), upload=Upload("project.zip", data.getvalue()))
    result = execute_job(job)
    assert result.error is None, result.output_tail
    assert result.output_tail.strip().splitlines()[-1] == "42"


# -- the job as data, and jobs without a sandbox ------------------------------------------------------


def test_job_round_trips_with_sandbox_and_upload() -> None:
    job = Job(
        "j",
        ("main.py", "--x", "1"),
        sandbox=Sandbox(memory_bytes=MIB * 256, hidden_paths=("/srv/data",), env={"A": "b"}),
        upload=Upload("main.py", b"print(1)\n"),
    )
    assert Job.from_dict(job.to_dict()) == job
    assert Sandbox.from_dict(json.loads(json.dumps(job.sandbox.to_dict()))) == job.sandbox  # type: ignore[union-attr]
    assert "print" not in repr(job.upload)  # the bytes stay out of logs
    with pytest.raises(ValueError, match="memory_byte"):
        Sandbox.from_dict({"memory_byte": 1})
    with pytest.raises(ValueError):
        Sandbox(max_processes=0)
    with pytest.raises(ValueError):
        Sandbox(hidden_paths=("relative/dir",))


def test_job_without_sandbox_behaves_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET, "hunter2")
    job = Job(
        "plain",
        (str(PROGRAMS / "sandbox_probe.py"),),
        env={"GIVEN": "1", "PROBE_ENV": f"{SECRET},GIVEN"},
        cwd=str(tmp_path),
    )
    result = execute_job(job)
    assert result.error is None, result.output_tail
    assert result.sandbox is None
    report = last_json(result)
    assert report["env"][SECRET] == "hunter2" and report["env"]["GIVEN"] == "1"
    assert report["cwd"] == str(tmp_path)
    assert report["uid"] == os.getuid()
    assert "environment" not in result.profile or "sandbox" not in result.profile["environment"]


def test_sandbox_option_is_hidden_from_help(capsys: pytest.CaptureFixture[str]) -> None:
    from memgauge.cli._main import main

    assert main(["run", "--help"]) == 0
    assert "--sandbox" not in capsys.readouterr().out
