"""`memgauge run --html`, `memgauge view` and `memgauge compare` as a user runs them: the real
command line in a child process, real profiles from real runs, real files, pipes and exit codes."""

from __future__ import annotations

import html
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memgauge.model._profile import READABLE_VERSIONS
from tests.conftest import MIB, PROGRAMS

# What the program of the `run --html` test writes: no trailing newline, a CR, bytes that are not UTF-8.
ECHO_BYTES = b"first line\r\nbinary \x00\xff\xfe\x80 and no newline at the end"
ECHO_PROGRAM = f"import sys\nsys.stdout.buffer.write({ECHO_BYTES!r})\n"


def memgauge(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memgauge", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )


def assert_error(r: subprocess.CompletedProcess[str], code: int, *messages: str) -> None:
    """One line on stderr, the documented code, nothing on stdout, no traceback."""
    assert r.returncode == code, r.stderr
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("memgauge: error: "), r.stderr
    for message in messages:
        assert message in lines[0]


def html_data(page: str) -> dict[str, Any]:
    """The JSON the page script reads."""
    m = re.search(r'<script type="application/json" id="memgauge-data">(.*?)</script>', page, re.S)
    assert m is not None
    data: dict[str, Any] = json.loads(m.group(1))
    return data


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


@dataclass(frozen=True)
class Runs:
    """Three real runs, made once for the module, in ``dir``: ``small.json`` (a 100 MiB spike),
    ``big.json`` (300 MiB) and ``P.json`` + ``R.html`` (a program echoing ``ECHO_BYTES``)."""

    dir: Path
    small: Path
    big: Path
    echo: Path
    echo_html: Path
    echo_run: subprocess.CompletedProcess[bytes]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    d = tmp_path_factory.mktemp("profiles")
    for name, mib in (("small", 100), ("big", 300)):
        spike = str(PROGRAMS / "spike.py")
        r = memgauge("run", "-q", "--json", f"{name}.json", spike, cwd=d, env={"SPIKE_MIB": str(mib)})
        assert r.returncode == 0, r.stderr
        assert r.stdout == "100\n"  # what spike.py keeps, in MiB
    (d / "prog.py").write_text(ECHO_PROGRAM)
    echo_run = subprocess.run(
        [sys.executable, "-m", "memgauge", "run", "--html", "R.html", "--json", "P.json", "prog.py"],
        capture_output=True,
        cwd=d,
        timeout=120,
    )
    return Runs(d, d / "small.json", d / "big.json", d / "P.json", d / "R.html", echo_run)


# -- memgauge run --html ------------------------------------------------------------------------------


def test_run_html_writes_both_files_and_leaves_stdout_alone(runs: Runs) -> None:
    r = runs.echo_run
    assert r.returncode == 0, r.stderr
    assert r.stdout == ECHO_BYTES  # byte for byte: no newline added, nothing decoded
    assert runs.echo.is_file() and runs.echo_html.is_file()
    profile = load(runs.echo)
    assert profile["command"][-1] == "prog.py"
    page = runs.echo_html.read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert html.escape(shlex.join(profile["command"])) in page
    assert html_data(page)["kind"] == "profile"
    assert r.stderr.endswith(b"profile: P.json\nreport: R.html\n")
    assert r.stderr.startswith(b"memgauge ")  # the terminal report, on stderr


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--html", "no/dir/R.html"], 73, "cannot write HTML report to no/dir/R.html: no directory"),
        (["--html", ""], 64, "--html needs a path"),
        (["--html="], 64, "--html needs a path"),
        (["--json", "same.out", "--html", "./same.out"], 64, "--json and --html name the same file"),
    ],
)
def test_run_html_problems_stop_before_the_program_runs(
    tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    (tmp_path / "prog.py").write_text("open('ran', 'w').close()\n")
    r = memgauge("run", *args, "prog.py", cwd=tmp_path)
    assert_error(r, code, message)
    assert not (tmp_path / "ran").exists()
    assert not (tmp_path / "same.out").exists()


def test_run_html_that_cannot_be_written_after_the_run_is_not_announced(tmp_path: Path) -> None:
    # The program removes the report's directory while it runs: the HTML cannot be written, the
    # profile still is, and the report must not say "report: PATH" for a file that does not exist.
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "prog.py").write_text("import shutil\nshutil.rmtree('out')\n")
    r = memgauge("run", "--json", "P.json", "--html", "out/R.html", "prog.py", cwd=tmp_path)
    assert r.returncode == 73, r.stderr
    assert "profile: P.json\n" in r.stderr
    assert "report: " not in r.stderr
    error = "memgauge: error: cannot write HTML report to out/R.html: No such file or directory\n"
    assert r.stderr.endswith(error)
    assert load(tmp_path / "P.json")["command"][-1] == "prog.py"


# -- memgauge view ------------------------------------------------------------------------------------


def test_view_prints_the_terminal_report_on_stdout(runs: Runs) -> None:
    r = memgauge("view", str(runs.small), cwd=runs.dir)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    command = shlex.join(load(runs.small)["command"])
    assert r.stdout.startswith(f"memgauge {command}\n")
    assert "resident peak " in r.stdout and "exit 0" in r.stdout
    assert "\x1b[" not in r.stdout  # not a terminal: no colors


def test_view_markdown(runs: Runs) -> None:
    r = memgauge("view", "--format", "md", "small.json", cwd=runs.dir)
    assert r.returncode == 0 and r.stderr == ""
    command = shlex.join(load(runs.small)["command"])
    assert r.stdout.startswith(f"### memgauge `{command}`\n")
    assert "**resident peak " in r.stdout


def test_view_json_is_the_profile(runs: Runs) -> None:
    r = memgauge("view", "--format", "json", "small.json", cwd=runs.dir)
    assert r.returncode == 0 and r.stderr == ""
    assert json.loads(r.stdout) == load(runs.small)


def test_view_output_file_is_written_atomically(runs: Runs, tmp_path: Path) -> None:
    # out.md starts as a hard link of keep.md: a rename replaces the link and leaves keep.md as it
    # was; writing into out.md in place would change both.
    (tmp_path / "keep.md").write_text("old\n")
    os.link(tmp_path / "keep.md", tmp_path / "out.md")
    r = memgauge("view", "-o", "out.md", "--format", "md", str(runs.small), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    assert r.stderr == "report: out.md\n"
    expected = memgauge("view", "--format", "md", str(runs.small), cwd=tmp_path).stdout
    assert (tmp_path / "out.md").read_text() == expected
    assert (tmp_path / "keep.md").read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.md", "out.md"]  # no temporary left


def test_view_html_alone_writes_only_the_html(runs: Runs, tmp_path: Path) -> None:
    r = memgauge("view", "--html", "R.html", str(runs.small), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    assert r.stderr == "report: R.html\n"
    assert [p.name for p in tmp_path.iterdir()] == ["R.html"]
    page = (tmp_path / "R.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert html_data(page)["kind"] == "profile"


def test_view_html_and_markdown_does_both(runs: Runs, tmp_path: Path) -> None:
    r = memgauge("view", "--html", "R.html", "--format", "md", str(runs.small), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("### memgauge ")
    assert r.stderr == "report: R.html\n"
    assert (tmp_path / "R.html").read_text().startswith("<!DOCTYPE html>")


def test_view_width(runs: Runs) -> None:
    wide = memgauge("view", "small.json", cwd=runs.dir)
    assert max(len(line) for line in wide.stdout.splitlines()) > 60  # else the test proves nothing
    r = memgauge("view", "--width", "60", "small.json", cwd=runs.dir)
    assert r.returncode == 0, r.stderr
    assert max(len(line) for line in r.stdout.splitlines()) <= 60
    assert "resident peak " in r.stdout


def test_view_lines_caps_table_rows(runs: Runs, tmp_path: Path) -> None:
    data = load(runs.small)
    pid = data["peak"]["attribution"][0]["pid"]
    data["peak"]["attribution"] = [
        {"pid": pid, "file": f"/srv/app/mark{i}.py", "line": i + 1, "function": "f", "bytes": (6 - i) * MIB}
        for i in range(6)
    ]
    (tmp_path / "many.json").write_text(json.dumps(data))
    default = memgauge("view", "many.json", cwd=tmp_path)
    assert default.returncode == 0, default.stderr
    assert re.findall(r"mark(\d)\.py", default.stdout) == ["0", "1", "2", "3", "4", "5"]
    r = memgauge("view", "--lines", "2", "many.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert re.findall(r"mark(\d)\.py", r.stdout) == ["0", "1"]


def test_view_color_is_forced_by_color_and_refused_by_no_color(runs: Runs) -> None:
    # TERM=dumb (some CI runners) turns rich's colors off even when forced
    r = memgauge("view", "--color", "small.json", cwd=runs.dir, env={"TERM": "xterm-256color"})
    assert r.returncode == 0 and "\x1b[" in r.stdout
    r = memgauge("view", "--no-color", "small.json", cwd=runs.dir, env={"FORCE_COLOR": "1"})
    assert r.returncode == 0 and "\x1b[" not in r.stdout


@pytest.fixture
def bad_inputs(runs: Runs, tmp_path: Path) -> Path:
    """Next to a copy of a good profile (P.json): files that are no readable profile."""
    shutil.copy(runs.small, tmp_path / "P.json")
    (tmp_path / "adir").mkdir()
    (tmp_path / "text.json").write_text("peak: 3 GiB\n")
    (tmp_path / "list.json").write_text("[1, 2, 3]\n")
    (tmp_path / "other.json").write_text('{"name": "not a profile"}\n')
    future = load(runs.small)
    future["version"] = 99
    (tmp_path / "future.json").write_text(json.dumps(future))
    (tmp_path / "a-file").write_text("")
    return tmp_path


SUPPORTED = f"(versions 1-{READABLE_VERSIONS[-1]}): upgrade memgauge"


@pytest.mark.parametrize(
    ("args", "code", "messages"),
    [
        (["missing.json"], 66, ["no profile missing.json"]),
        (["adir"], 65, ["adir is a directory, not a profile"]),
        (["text.json"], 65, ["profile is not valid JSON"]),
        (["list.json"], 65, ["not a memgauge profile"]),
        (["other.json"], 65, ['not a memgauge profile record (no "format": "memgauge-profile")']),
        (["future.json"], 65, ["memgauge-profile version 99 is newer than this memgauge reads", SUPPORTED]),
        (["-o", "no/dir/o.md", "P.json"], 73, ["cannot write report to no/dir/o.md: no directory no/dir"]),
        (["-o", "adir", "P.json"], 73, ["cannot write report to adir: it is a directory"]),
        (["-o", "a-file/out.md", "P.json"], 73, ["no directory a-file"]),
        (["--html", "no/dir/R.html", "P.json"], 73, ["no directory no/dir"]),
        (["--width", "10", "P.json"], 64, ["--width must be between 40 and 1000"]),
        (["--width", "wide", "P.json"], 64, ["invalid int value"]),
        (["--lines", "0", "P.json"], 64, ["--lines must be at least 1"]),
        (["--format", "xml", "P.json"], 64, ["invalid choice: 'xml'"]),
        (["-o", "same", "--html", "same", "P.json"], 64, ["--output and --html name the same file"]),
        (["-o", "./same", "--html", "same", "P.json"], 64, ["--output and --html name the same file"]),
        (["-o", "", "P.json"], 64, ["--output needs a path"]),
        (["--html", "", "P.json"], 64, ["--html needs a path"]),
        (["-o", "./P.json", "P.json"], 64, ["--output ./P.json would overwrite the profile P.json"]),
        (["--html", "P.json", "P.json"], 64, ["--html P.json would overwrite the profile P.json"]),
        ([], 64, ["the following arguments are required: PROFILE.json"]),
        (["P.json", "other.json"], 64, ["unrecognized arguments: other.json"]),
        (["--bogus", "P.json"], 64, ["unrecognized arguments: --bogus"]),
    ],
)
def test_view_bad_input(bad_inputs: Path, args: list[str], code: int, messages: list[str]) -> None:
    before = (bad_inputs / "P.json").read_bytes()
    r = memgauge("view", *args, cwd=bad_inputs)
    assert_error(r, code, *messages)
    assert (bad_inputs / "P.json").read_bytes() == before  # never overwritten
    assert not (bad_inputs / "same").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_view_output_into_a_read_only_directory(runs: Runs, tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        r = memgauge("view", "-o", str(ro / "out.md"), str(runs.small), cwd=tmp_path)
    finally:
        ro.chmod(0o755)
    assert_error(r, 73, "permission denied")


def test_view_into_a_fifo_writes_through_it(runs: Runs, tmp_path: Path) -> None:
    # -o /dev/stdout, a FIFO: the rename of an atomic write would replace it with a regular file
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # opened first: the writer does not block
    try:
        r = memgauge("view", "-o", str(fifo), str(runs.small), cwd=tmp_path, timeout=60)
        received = os.read(reader, 1 << 20).decode()
    finally:
        os.close(reader)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and r.stderr == f"report: {fifo}\n"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert received == memgauge("view", str(runs.small), cwd=tmp_path).stdout


def test_view_into_a_symlink_writes_its_target(runs: Runs, tmp_path: Path) -> None:
    (tmp_path / "latest.md").symlink_to("real.md")
    r = memgauge("view", "-o", "latest.md", "--format", "md", str(runs.small), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "report: latest.md\n"
    assert (tmp_path / "latest.md").is_symlink()  # not replaced by a regular file
    assert (tmp_path / "real.md").read_text().startswith("### memgauge ")


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="no /dev/fd")
def test_view_into_dev_fd_1(runs: Runs, tmp_path: Path) -> None:
    # -o /dev/fd/1 (or /dev/stdout): through stdout, a pipe here, and a file redirected to next
    r = memgauge("view", "-o", "/dev/fd/1", str(runs.small), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "report: /dev/fd/1\n"
    expected = memgauge("view", str(runs.small), cwd=tmp_path).stdout
    assert r.stdout == expected
    command = (
        f"{shlex.quote(sys.executable)} -m memgauge view -o /dev/fd/1 {shlex.quote(str(runs.small))} >out.txt"
    )
    r = subprocess.run(command, shell=True, capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out.txt").read_text() == expected


# -- closed pipes and a stdout that cannot be written ---------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["view", "small.json"],
        ["view", "--format", "json", "small.json"],
        ["compare", "small.json", "big.json"],
    ],
)
def test_a_reader_that_is_gone_is_not_an_error(runs: Runs, args: list[str]) -> None:
    # The read end is closed before memgauge writes: every write gets EPIPE, deterministically.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        r = subprocess.run(
            [sys.executable, "-m", "memgauge", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            cwd=runs.dir,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert r.returncode == 0
    assert r.stderr == ""  # no traceback, no "Exception ignored" at exit


def test_view_piped_into_head(runs: Runs, tmp_path: Path) -> None:
    err, rc = tmp_path / "err", tmp_path / "rc"
    command = (
        f"{{ {shlex.quote(sys.executable)} -m memgauge view small.json 2>{shlex.quote(str(err))}; "
        f"echo $? >{shlex.quote(str(rc))}; }} | head -n 1"
    )
    r = subprocess.run(command, shell=True, capture_output=True, text=True, cwd=runs.dir, timeout=60)
    assert r.returncode == 0
    assert r.stdout == f"memgauge {shlex.join(load(runs.small)['command'])}\n"
    assert rc.read_text() == "0\n"
    assert err.read_text() == ""


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("command", ["view small.json", "compare small.json big.json"])
def test_stdout_that_cannot_be_written_is_an_output_error(runs: Runs, command: str) -> None:
    with open("/dev/full", "w") as full:
        r = subprocess.run(
            [sys.executable, "-m", "memgauge", *command.split()],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            cwd=runs.dir,
            timeout=60,
        )
    assert r.returncode == 73  # an output that cannot be written, not an internal error (70)
    assert r.stderr == "memgauge: error: cannot write the report to stdout: No space left on device\n"


def test_closed_stdout_is_an_output_error(runs: Runs) -> None:
    command = f"{shlex.quote(sys.executable)} -m memgauge view small.json >&-"
    r = subprocess.run(command, shell=True, capture_output=True, text=True, cwd=runs.dir, timeout=60)
    assert r.returncode == 73
    assert r.stderr == "memgauge: error: cannot write the report to stdout: it is closed\n"


# -- memgauge compare ---------------------------------------------------------------------------------


def compare_json(runs: Runs, *args: str) -> dict[str, Any]:
    r = memgauge("compare", "--format", "json", *args, cwd=runs.dir)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    data: dict[str, Any] = json.loads(r.stdout)
    return data


def row(comparison: dict[str, Any], key: str) -> dict[str, Any]:
    (found,) = [r for r in comparison["summary"] if r["key"] == key]
    return found


def test_compare_terminal(runs: Runs) -> None:
    r = memgauge("compare", "small.json", "big.json", cwd=runs.dir)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    lines = r.stdout.splitlines()
    assert lines[0] == "memgauge compare · 2 profiles, baseline small"
    assert re.match(r"\s+small\s+exit 0\s+python .*spike\.py$", lines[1])
    assert re.match(r"\s+big\s+exit 0\s+python .*spike\.py$", lines[2])
    assert re.search(r"^\s+small\s+big\s+Δ\s+ratio$", r.stdout, re.M)
    peak = re.search(r"^resident peak\s+\S+ \S+\s+\S+ \S+\s+([+-]\S+) \S+\s+(\d+\.\d+)x$", r.stdout, re.M)
    assert peak is not None, r.stdout
    assert peak.group(1).startswith("+") and float(peak.group(2)) > 1.5


def test_compare_json_has_names_deltas_and_ratios(runs: Runs) -> None:
    c = compare_json(runs, "small.json", "big.json")
    assert c["names"] == ["small", "big"] and c["baseline"] == "small"
    peak = row(c, "resident_peak")
    small, big = load(runs.small), load(runs.big)
    assert peak["values"] == [small["peak"]["resident_bytes"], big["peak"]["resident_bytes"]]
    (delta,) = peak["deltas"]
    (ratio,) = peak["ratios"]
    assert delta == peak["values"][1] - peak["values"][0]
    assert delta > 150 * MIB  # spikes of 300 and 100 MiB
    assert ratio == pytest.approx(peak["values"][1] / peak["values"][0]) and ratio > 1.5
    assert {r["key"] for r in c["summary"]} >= {"resident_peak", "wall"}
    for r in c["summary"]:
        assert len(r["values"]) == 2 and len(r["deltas"]) == 1 and len(r["ratios"]) == 1


def test_compare_names_rename_the_columns(runs: Runs) -> None:
    r = memgauge("compare", "--names", "before, after", "small.json", "big.json", cwd=runs.dir)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("memgauge compare · 2 profiles, baseline before\n")
    assert re.search(r"^\s+before\s+after\s+Δ\s+ratio$", r.stdout, re.M)
    assert "small" not in r.stdout
    assert compare_json(runs, "--names", "x,y", "small.json", "big.json")["names"] == ["x", "y"]


@pytest.mark.parametrize(
    ("args", "code", "messages"),
    [
        (["--names", "x", "small.json", "big.json"], 64, ["--names needs 2 non-empty names"]),
        (["--names", "x,y,z", "small.json", "big.json"], 64, ["--names needs 2 non-empty names"]),
        (["--names", "x,", "small.json", "big.json"], 64, ["--names needs 2 non-empty names"]),
        (["--names", "x,x", "small.json", "big.json"], 64, ["--names must differ"]),
        (["small.json"], 64, ["compare needs at least two profiles"]),
        ([], 64, ["the following arguments are required: PROFILE.json"]),
        (["small.json", "missing.json"], 66, ["no profile missing.json"]),
        (["small.json", "prog.py"], 65, ["profile is not valid JSON"]),
        (["--html", "big.json", "small.json", "big.json"], 64, ["would overwrite the profile big.json"]),
        (["-o", "small.json", "small.json", "big.json"], 64, ["would overwrite the profile small.json"]),
        (["--html", "no/dir/C.html", "small.json", "big.json"], 73, ["no directory no/dir"]),
        (["--width", "2000", "small.json", "big.json"], 64, ["--width must be between 40 and 1000"]),
    ],
)
def test_compare_bad_input(runs: Runs, args: list[str], code: int, messages: list[str]) -> None:
    before = runs.small.read_bytes(), runs.big.read_bytes()
    r = memgauge("compare", *args, cwd=runs.dir)
    assert_error(r, code, *messages)
    assert (runs.small.read_bytes(), runs.big.read_bytes()) == before


def test_compare_markdown(runs: Runs) -> None:
    r = memgauge("compare", "--format", "md", "small.json", "big.json", cwd=runs.dir)
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.startswith("## memgauge compare: small, big\n")
    assert "| small (baseline) |" in r.stdout and "| big |" in r.stdout


def test_compare_html(runs: Runs, tmp_path: Path) -> None:
    r = memgauge("compare", "--html", str(tmp_path / "C.html"), "small.json", "big.json", cwd=runs.dir)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    assert r.stderr == f"report: {tmp_path / 'C.html'}\n"
    page = (tmp_path / "C.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert '"kind":"comparison"' in page
    data = html_data(page)
    assert data["kind"] == "comparison" and data["names"] == ["small", "big"]


def test_compare_output_file(runs: Runs, tmp_path: Path) -> None:
    out = str(tmp_path / "c.md")
    r = memgauge("compare", "-o", out, "--format", "md", "small.json", "big.json", cwd=runs.dir)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and r.stderr == f"report: {tmp_path / 'c.md'}\n"
    assert (tmp_path / "c.md").read_text().startswith("## memgauge compare: small, big\n")


def test_compare_three_profiles(runs: Runs) -> None:
    r = memgauge("compare", "small.json", "big.json", "P.json", cwd=runs.dir)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("memgauge compare · 3 profiles, baseline small\n")
    c = compare_json(runs, "small.json", "big.json", "P.json")
    assert c["names"] == ["small", "big", "P"]
    for summary_row in c["summary"]:
        assert len(summary_row["values"]) == 3 and len(summary_row["deltas"]) == 2


def test_compare_same_file_name_in_two_directories_uses_the_paths(runs: Runs, tmp_path: Path) -> None:
    for sub, src in (("d1", runs.small), ("d2", runs.big)):
        (tmp_path / sub).mkdir()
        shutil.copy(src, tmp_path / sub / "p.json")
    r = memgauge("compare", "d1/p.json", "d2/p.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("memgauge compare · 2 profiles, baseline d1/p.json\n")
    assert re.search(r"^\s+d1/p\.json\s+d2/p\.json\s+Δ\s+ratio$", r.stdout, re.M)
    j = memgauge("compare", "--format", "json", "d1/p.json", "d2/p.json", cwd=tmp_path)
    assert json.loads(j.stdout)["names"] == ["d1/p.json", "d2/p.json"]


# -- help and commands --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["--help"],
            [
                "usage: memgauge",
                "{run,view,compare,check,fit-limit,fit,sweep,plan,serve,submit,policy,machine,token}",
                "view: report a saved profile",
            ],
        ),
        (
            ["view", "--help"],
            ["usage: memgauge view [options] PROFILE.json", "--format", "--html", "--output", "--width"],
        ),
        (["view", "-h"], ["--lines", "--color", "--no-color", "{terminal,md,json}"]),
        (["compare", "--help"], ["usage: memgauge compare [options] BASELINE.json OTHER.json", "--names"]),
        (["run", "--help"], ["usage: memgauge run", "--html PATH"]),
    ],
)
def test_help(tmp_path: Path, args: list[str], expected: list[str]) -> None:
    r = memgauge(*args, cwd=tmp_path, env={"COLUMNS": "200"})  # argparse wraps at COLUMNS
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    for text in expected:
        assert text in r.stdout


def test_unknown_command(tmp_path: Path) -> None:
    assert_error(memgauge("show", "x.json", cwd=tmp_path), 64, "invalid choice: 'show'")


# -- the documentation of the exit codes ------------------------------------------------------------


def test_every_documented_exit_code_is_in_the_readme_table() -> None:
    # the table sits beside the one mapping of errors to exit codes
    import memgauge.cli._common as cli_common

    doc = cli_common.__doc__ or ""
    block = doc.split("Exit codes", 1)[1].split("\n\n", 1)[0]
    doc_firsts = [re.split(r"\s{2,}", line.strip())[0] for line in block.splitlines()[1:] if line.strip()]
    doc_codes = {int(n) for first in doc_firsts for n in re.findall(r"\d+", first)}
    assert doc_codes >= {64, 65, 66, 69, 70, 73, 126, 127, 128, 130}  # the block was parsed

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    section = readme.split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    cells = [line.split("|")[1].strip() for line in section.splitlines() if line.startswith("| ")]
    assert cells[0] == "code"
    readme_codes = {int(n) for cell in cells[1:] for n in re.findall(r"\d+", cell)}
    assert doc_codes <= readme_codes, f"not in README.md's table: {sorted(doc_codes - readme_codes)}"
    assert any(cell.startswith("the program's") for cell in cells)
