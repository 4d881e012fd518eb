"""``memgauge sweep`` end to end: real programs with known growth, real runs, real extrapolation.

The programs in ``programs/sweep_growth.py`` hold N MiB (linear), N*N KiB (quadratic) or 200 MiB +
N MiB (constant plus linear), every byte written. The law chosen for the resident peak must be the
one built in, and the prediction at 10x the largest size must land within 10% of a real run there.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MIB, PROGRAMS, run_memgauge

GROWTH = PROGRAMS / "sweep_growth.py"


def sweep(
    args: list[str], tmp_path: Path, *, timeout: float = 300, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any] | None]:
    """``memgauge sweep ARGS --format json -o report.json``; the report (record + analysis)."""
    out = tmp_path / "report.json"
    if out.exists():
        out.unlink()
    # ours before `--`: what follows it is the program's
    cut = args.index("--") if "--" in args else len(args)
    ours = [*args[:cut], "--format", "json", "-o", str(out), *args[cut:]]
    proc = subprocess.run(
        [sys.executable, "-m", "memgauge", "sweep", *ours],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )
    return proc, json.loads(out.read_text()) if out.exists() else None


def law(report: dict[str, Any], metric: str, param: str = "N") -> dict[str, Any]:
    rows = [r for r in report["analysis"]["laws"] if r["metric"] == metric and r["param"] == param]
    assert len(rows) == 1, rows
    return rows[0]


def prediction(report: dict[str, Any], metric: str) -> dict[str, Any]:
    rows = [r for r in report["analysis"]["predictions"] if r["metric"] == metric]
    assert len(rows) == 1, rows
    return rows[0]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("growth", "sizes", "expected"),
    [
        ("linear", [20, 40, 80, 160], "linear"),
        ("quadratic", [64, 96, 128, 192], "quadratic"),
        ("affine", [20, 40, 80, 160], "linear"),
    ],
)
def test_known_growth_gets_its_law_and_10x_lands_within_10_percent(
    tmp_path: Path, growth: str, sizes: list[int], expected: str
) -> None:
    target = 10 * max(sizes)
    proc, report = sweep(
        [
            str(GROWTH),
            "--param",
            f"GROWTH={growth}",
            "--param",
            "N=" + ",".join(map(str, sizes)),
            "--predict",
            f"N={target}",
            "--json",
            str(tmp_path / "record.json"),
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert report is not None
    fit = law(report, "rss")
    assert fit["law"] == expected, fit
    if growth == "affine":
        # the constant part: 200 MiB held from the start, plus the interpreter's own ~10-20 MiB
        assert 200 * MIB <= fit["a"] <= 240 * MIB, fit
    pred = prediction(report, "rss")
    assert pred["supported"], pred
    real = run_memgauge([str(GROWTH)], tmp_path, env={"GROWTH": growth, "N": str(target)})
    assert real.returncode == 0 and real.profile is not None
    measured = real.profile["peak"]["resident_bytes"]
    assert abs(pred["value"] - measured) <= 0.10 * measured, (pred, measured / MIB)
    # the record on disk has every run, and the phases and metric of each
    record = json.loads((tmp_path / "record.json").read_text())
    assert record["complete"] is True and len(record["points"]) == len(sizes)
    for point in record["points"]:
        (run,) = point["runs"]
        assert run["ok"] and run["metrics"] == {"items": float(point["params"]["N"])}
        assert set(run["phases"]) == {"load", "compute"}
        assert 0.19 <= run["phases"]["load"]["seconds"] <= 1.0


@pytest.mark.slow
def test_budget_largest_size_is_confirmed_by_a_real_run(tmp_path: Path) -> None:
    limit = 600 * MIB
    proc, report = sweep(
        [str(GROWTH), "--param", "N=20,40,80,160", "--budget", "rss=600MiB", "--confirm", "--no-json"],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert report is not None
    (row,) = report["analysis"]["binding"]
    assert row["status"] == "fits" and row["metric"] == "rss"
    # a few percent under the exact solution (N + ~13 MiB = 600): the interval's top must fit
    assert 500 <= row["largest"] <= 590, row
    (confirmation,) = report["confirmations"]
    # the confirming run joins the fit, which can move the largest size a little from the size run
    assert abs(confirmation["params"]["N"] - row["largest"]) <= 0.05 * row["largest"], (confirmation, row)
    measured = confirmation["run"]["rss_bytes"]
    assert confirmation["run"]["ok"]
    assert 0.85 * limit <= measured <= limit, measured / MIB
    assert "confirming N=" in proc.stderr


@pytest.mark.slow
def test_a_confirming_run_over_the_limit_joins_the_fit_and_the_search_repeats(tmp_path: Path) -> None:
    # 64 MiB more from N=300 on: nothing swept shows it, the first confirming run (~N=580) does
    limit = 600 * MIB
    args = [str(GROWTH), "--param", "GROWTH=step", "--param", "N=20,40,80,160", "--budget", "rss=600MiB"]
    proc, report = sweep([*args, "--confirm", "--no-json", "--no-lines"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert report is not None
    first, *_, last = report["confirmations"]
    assert first["run"]["rss_bytes"] > limit and first["params"]["N"] >= 300
    assert last["run"]["rss_bytes"] <= limit and last["params"]["N"] < first["params"]["N"]
    assert "went over rss=600MiB; fitting again" in proc.stderr
    assert len(report["confirmations"]) <= 3


def test_budget_nothing_fits_exits_1(tmp_path: Path) -> None:
    proc, report = sweep(
        [str(GROWTH), "--param", "N=20,40,80", "--budget", "rss=20MiB", "--no-json"], tmp_path
    )
    assert proc.returncode == 1, proc.stderr
    assert report is not None
    (row,) = report["analysis"]["binding"]
    assert row["status"] == "none" and "N=20" in row["reason"]


def test_worker_scaling_finds_the_knee_where_the_shared_resource_saturates(tmp_path: Path) -> None:
    # 2 slots of a shared resource: throughput doubles from 1 worker to 2 and stops there
    proc, report = sweep(
        [str(PROGRAMS / "sweep_workers.py"), "--param", "WORKERS=1,2,4,8", "--no-json", "--no-lines"],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert report is not None
    (row,) = report["analysis"]["scaling"]
    assert row["param"] == "WORKERS" and row["metric"] == "items"
    speedup = {p["workers"]: p["speedup"] for p in row["points"]}
    efficiency = {p["workers"]: p["efficiency"] for p in row["points"]}
    assert 1.5 <= speedup[2] <= 2.1, row
    assert speedup[4] <= speedup[2] * 1.3 and speedup[8] <= speedup[2] * 1.3, row
    assert efficiency[8] <= 0.3, row
    assert row["knee"] == 2, row
    # the worker count is no size: no growth law is fitted against it
    assert not [r for r in report["analysis"]["laws"] if r["param"] == "WORKERS"]


def test_parameters_reach_the_program_through_env_templates_and_arguments(tmp_path: Path) -> None:
    proc, report = sweep(
        [
            str(PROGRAMS / "sweep_args.py"),
            "--param",
            "N=1e3,2.5e3",
            "--param",
            "S=0.5",
            "--arg",
            "--rows {N}",
            "--no-json",
            "--no-lines",
            "--",
            "size-{N}",
            "--scale={S}",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert report is not None
    assert report["params"] == {"N": [1000, 2500], "S": [0.5]}
    for point in report["points"]:
        n = point["params"]["N"]
        assert point["runs"][0]["metrics"] == {"rows": n, "scale": 0.5, "env_n": n, "label_ok": 1}


def test_each_point_is_isolated_and_repeats_are_kept(tmp_path: Path) -> None:
    # the big point first: a shared process would carry its 150 MiB into the small one
    proc, report = sweep(
        [str(GROWTH), "--param", "N=150,5", "--repeat", "2", "--json", str(tmp_path / "r.json")], tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert report is not None
    big, small = report["points"]
    assert len(big["runs"]) == len(small["runs"]) == 2
    assert all(r["rss_bytes"] >= 150 * MIB for r in big["runs"])
    assert all(r["rss_bytes"] < 60 * MIB for r in small["runs"]), [
        r["rss_bytes"] / MIB for r in small["runs"]
    ]
    # progress on a stderr that is no terminal: one line per run, with the time left
    assert "[1/4] N=150" in proc.stderr and "left" in proc.stderr and "[4/4] N=5" in proc.stderr


def test_failed_and_timed_out_runs_are_recorded_and_exit_2(tmp_path: Path) -> None:
    proc, report = sweep(
        [str(GROWTH), "--param", "GROWTH=linear,bogus", "--param", "N=5", "--no-json", "--no-lines"], tmp_path
    )
    assert proc.returncode == 2, proc.stderr
    assert report is not None
    ok, bad = report["points"]
    assert ok["runs"][0]["ok"] and not bad["runs"][0]["ok"]
    assert bad["runs"][0]["exit"] == "exit 1"
    assert "unknown GROWTH bogus" in bad["runs"][0]["output_tail"]

    started = time.monotonic()
    proc, report = sweep(
        [str(PROGRAMS / "sweep_sleep.py"), "--param", "N=1", "--timeout", "1s", "--no-json", "--no-lines"],
        tmp_path,
    )
    assert time.monotonic() - started < 20
    assert proc.returncode == 2, proc.stderr
    assert report is not None
    run = report["points"][0]["runs"][0]
    assert not run["ok"] and "time limit of 1 s" in run["exit"]
    # the limit counts from the job's start, memgauge's own start-up (~0.1-0.2 s) included
    assert 0.5 <= run["wall_seconds"] <= 10


def test_interrupt_keeps_the_finished_runs(tmp_path: Path) -> None:
    started = tmp_path / "started.txt"
    record = tmp_path / "record.json"
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "memgauge", "sweep", str(PROGRAMS / "sweep_sleep.py"),
            "--param", "N=1,2,3", "--json", str(record), "--no-lines", "-q",
        ],
        # the first point at once, the others until interrupted: the interrupt lands while one runs
        env={**os.environ, "SLEEP": "60", "SLEEP_1": "0", "STARTED_FILE": str(started)},
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (
        not record.exists() or not json.loads(record.read_text())["points"][0]["runs"]
    ):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    data = json.loads(record.read_text())
    assert data["complete"] is False
    assert data["points"][0]["runs"] and data["points"][0]["runs"][0]["ok"]
    assert "the runs that finished are in" in err


def test_load_reanalyses_a_record_without_running(tmp_path: Path) -> None:
    record = tmp_path / "record.json"
    proc, first = sweep([str(GROWTH), "--param", "N=20,40,80", "--json", str(record), "--no-lines"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert first is not None
    proc, again = sweep(["--load", str(record), "--predict", "N=800"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert again is not None
    assert law(again, "rss")["law"] == law(first, "rss")["law"] == "linear"
    assert prediction(again, "rss")["x"] == 800
    assert again["points"] == first["points"]
    # the same record as Markdown: the report's tables, no rich console in it
    md = tmp_path / "report.md"
    args = ["--load", str(record), "--predict", "N=800", "--format", "md", "-o", str(md)]
    proc = subprocess.run([sys.executable, "-m", "memgauge", "sweep", *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (
        md.read_text().startswith("### memgauge sweep `")
        and "**predictions at N=800 (95% interval)**" in md.read_text()
    )


def test_html_report_is_written(tmp_path: Path) -> None:
    html = tmp_path / "sweep.html"
    proc, _ = sweep(
        [str(GROWTH), "--param", "N=5,10,20", "--html", str(html), "--no-json", "--no-lines"], tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    text = html.read_text()
    assert text.lower().startswith("<!doctype html>")
    assert "sweep_growth.py" in text and "<canvas" in text
    assert f"report: {html}" in proc.stderr


def test_concurrency_above_one_warns_about_timings(tmp_path: Path) -> None:
    proc, report = sweep(
        [str(GROWTH), "--param", "N=5,6", "--concurrency", "2", "--no-json", "--no-lines", "-q"], tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert "--concurrency 2 runs points at the same time" in proc.stderr
    assert report is not None and report["concurrency"] == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([str(GROWTH)], "nothing to sweep"),
        ([str(GROWTH), "--param", "1N=1,2"], "not a valid environment variable name"),
        ([str(GROWTH), "--param", "N=1,,2"], "empty value"),
        ([str(GROWTH), "--param", "N=1,1"], "given twice"),
        ([str(GROWTH), "--param", "N=1,2", "--predict", "M=5"], "no --param M"),
        ([str(GROWTH), "--param", "N=1", "--predict", "N=5"], "not varied"),
        ([str(GROWTH), "--param", "N=a,b", "--predict", "N=c"], "only a numeric parameter"),
        ([str(GROWTH), "--param", "N=1,2", "--arg", "--rows {M}"], "names {M}"),
        ([str(GROWTH), "--param", "N=1,2", "--confirm"], "--confirm checks"),
        ([str(GROWTH), "--param", "N=1,2", "--budget", "rss=5M"], "ambiguous"),
        ([str(GROWTH), "--param", "N=1,2", "--concurrency", "0"], "at least 1"),
        ([str(GROWTH), "--param", "N=1,2", "--repeat", "0"], "at least 1"),
        ([str(GROWTH), "--param", "N=1,2", "--size", "Q"], "no such --param"),
        ([str(GROWTH), "--param", "N=1,2", "--gpus", "1"], "--engine ray"),
        (["missing.py", "--param", "N=1,2"], "no such script"),
        (["--load", "nothing.json"], "no such sweep record"),
        (["--load", "x.json", "--param", "N=1"], "give no program and no --param"),
    ],
)
def test_bad_input_is_refused_before_anything_runs(tmp_path: Path, args: list[str], message: str) -> None:
    proc, report = sweep([*args, "--no-json"] if "--load" not in args else args, tmp_path, timeout=60)
    assert proc.returncode in (64, 65, 66), proc.stderr
    assert message in proc.stderr, proc.stderr
    assert report is None
    assert not list(tmp_path.glob("memgauge-sweep-*.json"))


def test_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    import pty
    import re

    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memgauge",
            "sweep",
            str(GROWTH),
            "--param",
            "N=5,10,20",
            "--no-json",
            "--no-lines",
            "-o",
            str(tmp_path / "report.txt"),
            "--width",
            "100",
        ],
        stderr=follower,
        stdout=subprocess.DEVNULL,
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "120"},
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the terminal closed with the program
            break
        if not data:
            break
        chunks.append(data)
    assert proc.wait(timeout=120) == 0
    os.close(leader)
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode("utf-8", "replace"))
    frames = [f for f in screen.replace("\n", "\r").split("\r") if f.startswith("sweep")]
    assert any("1/3" in f and "left" in f and "N=5:" in f for f in frames), frames
    assert any("3/3" in f for f in frames) and not any("3/3" in f and "left" in f for f in frames), frames
    assert "report: " in screen


def test_save_keeps_every_runs_profile(tmp_path: Path) -> None:
    saved = tmp_path / "profiles"
    proc, report = sweep(
        [str(GROWTH), "--param", "N=5,10", "--repeat", "2", "--save", str(saved), "--no-json", "--no-lines"],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert report is not None
    paths = [r["profile_path"] for p in report["points"] for r in p["runs"]]
    assert len(set(paths)) == 4 and sorted(Path(p).name for p in paths) == sorted(
        x.name for x in saved.iterdir()
    )
    view = subprocess.run(
        [sys.executable, "-m", "memgauge", "view", "--format", "json", paths[0]],
        capture_output=True,
        text=True,
    )
    assert (
        view.returncode == 0
        and json.loads(view.stdout)["peak"]["resident_bytes"] == report["points"][0]["runs"][0]["rss_bytes"]
    )


def test_the_record_goes_to_a_default_file_named_after_the_program(tmp_path: Path) -> None:
    proc, report = sweep([str(GROWTH), "--param", "N=5,6", "--no-lines", "-q"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    (written,) = tmp_path.glob("memgauge-sweep-sweep_growth-*.json")
    assert f"sweep record: {written.name}" in proc.stderr
    assert report is not None and json.loads(written.read_text())["points"] == report["points"]


def test_workers_is_the_old_spelling_of_worker_param_and_says_so(tmp_path: Path) -> None:
    # POOL is no name a worker count is known by: only the option makes it one
    program = tmp_path / "pool.py"
    program.write_text(
        "import os\nimport memgauge\n\nmemgauge.record('items', 10 * int(os.environ['POOL']))\n"
    )
    record = tmp_path / "record.json"
    proc, report = sweep(
        [str(program), "--param", "POOL=1,2", "--json", str(record), "--no-lines", "-q"], tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert report is not None and report["analysis"]["scaling"] == []

    proc, new = sweep(["--load", str(record), "--worker-param", "POOL"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "deprecated" not in proc.stderr
    assert new is not None and [row["param"] for row in new["analysis"]["scaling"]] == ["POOL"]

    proc, old = sweep(["--load", str(record), "--workers", "POOL"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert warnings == ["memgauge: warning: sweep --workers NAME is deprecated: use --worker-param NAME"]
    assert old == new

    proc, _ = sweep(["--load", str(record), "--workers", "NOPE"], tmp_path)
    assert proc.returncode == 64
    assert proc.stderr.splitlines()[-1] == "memgauge: error: --worker-param NOPE: no such --param"

    proc, _ = sweep(["--load", str(record), "--workers", "POOL", "--worker-param", "POOL"], tmp_path)
    assert proc.returncode == 64 and "give --worker-param only" in proc.stderr
