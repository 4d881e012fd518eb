"""The command line: bad input gives one line and a documented exit code, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memgauge._errors import InternalError, UsageError
from memgauge.cli import main
from memgauge.cli._common import Command, Parser, build_parser, split_argv
from memgauge.cli.commands import all_commands
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


# -- where memgauge's options end and the program's begin ------------------------------------------

_SPLIT_AT_TARGET = [c for c in all_commands() if c.program == "target"]


@pytest.mark.parametrize("command", _SPLIT_AT_TARGET, ids=[c.name for c in _SPLIT_AT_TARGET])
def test_the_argv_split_knows_every_option_of_the_commands_parser(command: Command) -> None:
    # read from the parser: an option added to it is never taken for the program's first word
    parser = build_parser(command)
    values = parser.values_taken()
    if "--json" in values:  # the measured run's options (run, check); fit-limit has none of them
        assert values["--json"] == 1 and values["--quiet"] == 0 and values["--no-color"] == 0
    program = ["prog.py", "-v", "--json", "out.json"]
    for option, n in values.items():
        if option in ("-h", "--help"):
            continue
        ours = [option, *["1"] * n]
        assert split_argv(parser, [*ours, *program], command.program) == (ours, program), option
        if n == 1 and option.startswith("--"):
            joined = [f"{option}=1"]
            assert split_argv(parser, [*joined, *program], command.program) == (joined, program)


@pytest.mark.parametrize(
    ("argv", "ours", "program"),
    [
        (["-q", "-m", "pkg.mod", "-q"], ["-q"], ["-m", "pkg.mod", "-q"]),
        (["-mpkg.mod"], [], ["-mpkg.mod"]),
        (["--no-json", "--", "ls", "-l"], ["--no-json"], ["--", "ls", "-l"]),
        (["--interval", "0.5", "-", "a"], ["--interval", "0.5"], ["-", "a"]),
        (["--json"], ["--json"], []),  # argparse then says the value is missing
    ],
)
def test_run_argv_split(argv: list[str], ours: list[str], program: list[str]) -> None:
    run = next(c for c in all_commands() if c.name == "run")
    assert split_argv(build_parser(run), argv, "target") == (ours, program)


@pytest.mark.parametrize("argv", [["--bogus", "x.py"], ["--quiet=1", "x.py"], ["-qx", "x.py"]])
def test_run_argv_split_refuses_what_is_not_an_option_of_run(argv: list[str]) -> None:
    run = next(c for c in all_commands() if c.name == "run")
    with pytest.raises(UsageError, match="unknown option"):
        split_argv(build_parser(run), argv, "target")


def test_the_split_after_dashes_and_none() -> None:
    parser = Parser(prog="memgauge x")
    assert split_argv(parser, ["a", "--", "b", "--", "c"], "after-dashes") == (["a"], ["b", "--", "c"])
    assert split_argv(parser, ["a", "b"], "after-dashes") == (["a", "b"], [])
    assert split_argv(parser, ["a", "--", "b"], "none") == (["a", "--", "b"], [])


def test_an_option_with_a_variable_number_of_values_cannot_precede_a_program() -> None:
    parser = Parser(prog="memgauge x")
    parser.add_argument("--maybe", nargs="?")
    with pytest.raises(InternalError, match="variable number of values"):
        split_argv(parser, ["--maybe", "x.py"], "target")


def test_every_command_is_listed_once_in_the_top_level_help(capsys: pytest.CaptureFixture[str]) -> None:
    names = [c.name for c in all_commands()]
    service = ["serve", "submit", "policy", "machine", "token"]
    assert names == ["run", "view", "compare", "check", "fit-limit", "fit", "sweep", "plan", *service]
    assert main(["--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for command in all_commands():
        assert f"{command.name}: {command.summary}" in out


def test_submit_timeout_is_the_old_spelling_of_max_wait(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # --timeout bounds a run in sweep; in submit it only ever bounded the wait, now --max-wait
    job = tmp_path / "job.py"
    job.write_text("print(1)\n")
    # nothing listens on port 9 of loopback: the request fails after the options were read
    base = ["submit", "--server", "http://127.0.0.1:9", "--token", "mg_x", "--policy", "p"]
    assert main([*base, "--timeout", "5", str(job)]) == 69
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "memgauge: warning: submit --timeout SECONDS is deprecated: use --max-wait SECONDS"
    assert main([*base, "--max-wait", "5", str(job)]) == 69
    assert "deprecated" not in capsys.readouterr().err
    assert main([*base, "--max-wait", "5", "--timeout", "5", str(job)]) == 64
    assert "give --max-wait only" in capsys.readouterr().err
    assert main([*base, "--max-wait", "0", str(job)]) == 64
