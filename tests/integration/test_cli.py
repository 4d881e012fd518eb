"""The command line: bad input gives one line and a documented exit code, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memgauge.cli import main
from tests.conftest import PROGRAMS


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memgauge", *args], capture_output=True, text=True, cwd=cwd, timeout=60
    )


@pytest.fixture
def bad_syntax(tmp_path: Path) -> Path:
    p = tmp_path / "bad.py"
    p.write_text("def f(:\n    pass\n")
    return p


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["run", "--no-json", "missing.py"], 66, "no such script: missing.py"),
        (["run", "--no-json", "-m", "no_such_module_xyz"], 66, "No module named 'no_such_module_xyz'"),
        (["run", "--no-json", "-m", "not a module"], 64, "not a module name"),
        (["run", "--no-json", "--", "no-such-command-xyz"], 127, "command not found: no-such-command-xyz"),
        (["run", "--no-json", "--", "./data.txt"], 126, "not executable: ./data.txt"),
        (["run", "--no-json", "--", "./garbage"], 126, "cannot execute ./garbage: Exec format error"),
        (["run", "--bogus", "x.py"], 64, "unknown option --bogus"),
        (["run", "--interval", "0", "x.py"], 64, "--interval must be"),
        (["run", "--cgroup", "v9", "x.py"], 64, "invalid choice"),
        (["run"], 64, "nothing to run"),
        (["run", "--"], 64, "nothing to run after --"),
        (["frobnicate"], 64, "invalid choice"),
        ([], 64, "give a command"),
        (["run", "--json", "/no/such/dir/p.json", "x.py"], 73, "no directory /no/such/dir"),
    ],
)
def test_bad_input_one_line_and_exit_code(tmp_path: Path, args: list[str], code: int, message: str) -> None:
    (tmp_path / "x.py").write_text("print('ran')\n")
    (tmp_path / "data.txt").write_text("not a program\n")
    (tmp_path / "garbage").write_bytes(b"\x00\x01\x02 not a program\n")
    (tmp_path / "garbage").chmod(0o755)
    r = cli(*args, cwd=tmp_path)
    assert r.returncode == code, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("memgauge: error: ") and message in lines[0]
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_syntax_error_names_file_and_line(tmp_path: Path, bad_syntax: Path) -> None:
    r = cli("run", "--no-json", str(bad_syntax), cwd=tmp_path)
    assert r.returncode == 65
    assert r.stderr.strip() == f"memgauge: error: {bad_syntax}:1: syntax error: invalid syntax"


def test_output_path_that_is_a_directory_is_refused_before_running(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("open('ran', 'w').close()\n")
    r = cli("run", "--json", str(tmp_path), "x.py", cwd=tmp_path)
    assert r.returncode == 73 and "is a directory" in r.stderr
    assert not (tmp_path / "ran").exists()  # nothing ran: the user would have lost the result


def test_default_profile_path_is_printed_and_written(tmp_path: Path) -> None:
    (tmp_path / "job.py").write_text("print('ran')\n")
    r = cli("run", "job.py", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == "ran\n"
    (written,) = tmp_path.glob("memgauge-job-*.json")
    assert f"profile: {written.name}" in r.stderr


def test_quiet_prints_nothing_of_memgauge(tmp_path: Path) -> None:
    r = cli("run", "-q", "--no-json", str(PROGRAMS / "streams.py"), cwd=tmp_path)
    assert r.returncode == 3
    assert r.stderr == "to-stderr\n"


def test_help_and_version_exit_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert main(["run", "--help"]) == 0
    out = capsys.readouterr().out
    assert "memgauge 0." in out and "usage: memgauge run" in out


def test_a_command_on_path_runs_without_double_dash(tmp_path: Path) -> None:
    # `memgauge run python -c ...` without `--`: python is a command on PATH, not a script
    r = cli("run", "--no-json", "-q", "python3", "-c", "print(6 * 7)", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "42\n"
