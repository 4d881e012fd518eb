"""Regressions from a review of ``memgauge sweep``: each test failed before its fix.

Most are unit-level (a hand-made record through ``analyze`` or a renderer); the few that need the
command itself run tiny programs with ``--no-lines``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memgauge._errors import ProfileFormatError
from memgauge.analysis import analyze
from memgauge.analysis._growth import select_law
from memgauge.analysis._predict import predict
from memgauge.model import RunSummary, SweepResult
from memgauge.model._sweep import Point, Value
from memgauge.render import JsonSweepRenderer, TerminalSweepRenderer
from memgauge.sweep._params import check_templates, expand, substitute

MIB = 1 << 20


def _result(params: dict[str, list[Value]], runs: dict[tuple[Value, ...], list[RunSummary]]) -> SweepResult:
    """A record whose points are ``runs`` keyed by their values, in the order of ``params``."""
    points = [Point(dict(zip(params, key, strict=True)), list(rs)) for key, rs in runs.items()]
    return SweepResult(
        command=["prog.py"], params=params, repeat=1, engine="local", concurrency=1, points=points
    )


def _run(rss: float, wall: float = 1.0, ok: bool = True, **metrics: float) -> RunSummary:
    return RunSummary(
        ok=ok, exit="ok" if ok else "exit 1", rss_bytes=int(rss), wall_seconds=wall, metrics=dict(metrics)
    )


def _sweep(args: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, Any] | None]:
    out = cwd / "report.json"
    cut = args.index("--") if "--" in args else len(args)
    ours = [*args[:cut], "--format", "json", "-o", str(out), "--no-lines", "-q", *args[cut:]]
    proc = subprocess.run(
        [sys.executable, "-m", "memgauge", "sweep", *ours],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        env=dict(os.environ),
    )
    return proc, json.loads(out.read_text()) if out.exists() else None


# -- running -----------------------------------------------------------------------------------------


def test_points_whose_names_make_the_same_slug_keep_their_own_runs(tmp_path: Path) -> None:
    # "a b" and "a_b" both made the job id "MODEL=a_b-r1": one point got both runs (or the other's
    # figures), the other none, and the sweep still said "complete" with exit 0
    prog = tmp_path / "prog.py"
    prog.write_text("import os, memgauge\nmemgauge.record('space', 1 if ' ' in os.environ['MODEL'] else 0)\n")
    proc, report = _sweep([str(prog), "--param", "MODEL=a b,a_b", "--no-json", "--save", "runs"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert report is not None
    spaced, plain = report["points"]
    assert [r["metrics"]["space"] for r in spaced["runs"]] == [1]
    assert [r["metrics"]["space"] for r in plain["runs"]] == [0]
    assert len(os.listdir(tmp_path / "runs")) == 2  # neither saved profile overwrote the other


def test_a_text_worker_count_is_refused_before_anything_runs(tmp_path: Path) -> None:
    prog = tmp_path / "prog.py"
    # with a metric recorded, the analysis failed on float("a"): exit 70 after every run
    prog.write_text("import memgauge\nmemgauge.record('items', 1)\nopen('ran', 'w').close()\n")
    proc, _ = _sweep([str(prog), "--param", "MODEL=a,b", "--workers", "MODEL", "--no-json"], tmp_path)
    assert proc.returncode == 64, proc.stderr
    assert "must be numeric" in proc.stderr and "internal error" not in proc.stderr
    assert not (tmp_path / "ran").exists()


def test_a_template_value_that_breaks_shell_splitting_is_refused_before_anything_runs(
    tmp_path: Path,
) -> None:
    prog = tmp_path / "prog.py"
    prog.write_text("open('ran', 'w').close()\n")
    proc, _ = _sweep(
        [str(prog), "--param", "MODEL=ab,it's", "--arg", "--model {MODEL}", "--json", "rec.json"], tmp_path
    )
    assert proc.returncode == 64, proc.stderr
    assert "No closing quotation" in proc.stderr
    assert not (tmp_path / "ran").exists() and not (tmp_path / "rec.json").exists()


def test_braces_that_name_no_parameter_are_the_programs_own_text() -> None:
    # a JSON argument or a format string after `--` was refused as "no --param"
    params: dict[str, list[Value]] = {"N": [1, 2]}
    args = ['{"k": 1}', "out-{}.csv", "{N}-{N}"]
    check_templates(args, params)
    assert substitute(args, {"N": 1}) == ['{"k": 1}', "out-{}.csv", "1-1"]
    assert expand(["--fmt {} --n {N}"], {"N": 2}) == ["--fmt", "{}", "--n", "2"]


# -- analysis ----------------------------------------------------------------------------------------


def test_a_metric_of_zero_or_zero_workers_is_no_internal_error() -> None:
    # worker_scaling raised "throughputs must be positive": exit 70 after the whole sweep
    result = _result(
        {"WORKERS": [0, 1, 2, 4]},
        {
            (0,): [_run(MIB, items=0)],
            (1,): [_run(MIB, items=0)],
            (2,): [_run(MIB, items=20)],
            (4,): [_run(MIB, items=40)],
        },
    )
    a = analyze(result)
    (row,) = a.scaling
    assert [p.workers for p in row.scaling.points] == [2, 4]
    assert any("leaves out 2 run(s)" in note for note in a.notes), a.notes
    JsonSweepRenderer().render(a)
    TerminalSweepRenderer().render(a)

    nothing = _result({"WORKERS": [1, 2]}, {(1,): [_run(MIB, items=0)], (2,): [_run(MIB, items=0)]})
    assert analyze(nothing).scaling == ()


def test_a_misspelt_metric_is_said_not_silently_ignored() -> None:
    result = _result({"WORKERS": [1, 2]}, {(1,): [_run(MIB, items=10)], (2,): [_run(MIB, items=20)]})
    a = analyze(result, throughput="itmes")
    assert a.scaling == ()
    assert any("'itmes'" in note and "items" in note for note in a.notes), a.notes


def test_predicting_at_a_negative_size_with_a_power_law_is_no_internal_error() -> None:
    xs = [1, 2, 4, 8, 16]
    runs = {(x,): [_run((3 + x**1.5) * MIB), _run((3.1 + x**1.5) * MIB)] for x in xs}
    result = _result({"N": xs}, runs)
    assert select_law([float(x) for x in xs] * 2, [r.rss_bytes for x in xs for r in runs[(x,)]]) is not None
    a = analyze(result, predict_at=("N", -5.0, {}))
    (rss,) = [row for row in a.predictions if row.metric == "rss"]
    assert rss.prediction is None and rss.reason is not None and "not defined at N=-5" in rss.reason
    JsonSweepRenderer().render(a)
    TerminalSweepRenderer().render(a)


def test_a_size_at_zero_is_explained_without_infinity() -> None:
    growth = select_law([5, 10, 20, 40], [5.0, 10.0, 20.0, 40.0])
    assert growth is not None
    reason = predict(growth, 0).reason
    assert reason is not None and "inf" not in reason and "below a hundredth" in reason


def test_a_budget_over_sizes_at_or_below_zero_is_no_internal_error() -> None:
    result = _result({"N": [-3, -2, -1]}, {(n,): [_run(MIB * (4 + n))] for n in (-3, -2, -1)})
    a = analyze(result, limits=[("rss", 1024 * MIB, "rss=1GiB")])
    (row,) = a.budget
    assert row.status == "unknown" and row.reason is not None and "positive" in row.reason


# -- records and reports -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value"),
    [("metrics", {"items": float("nan")}), ("rss_bytes", "12"), ("rss_bytes", float("inf"))],
)
def test_an_edited_record_with_a_figure_that_is_no_number_is_malformed(key: str, value: object) -> None:
    # a NaN metric passed the load and failed in a fit: exit 70 instead of "malformed record"
    result = _result({"N": [1, 2, 3]}, {(n,): [_run(n * MIB, items=n)] for n in (1, 2, 3)})
    data = json.loads(result.to_json())
    data["points"][0]["runs"][0][key] = value
    with pytest.raises(ProfileFormatError, match="not a finite number"):
        SweepResult.from_dict(json.loads(json.dumps(data)))


def test_the_terminal_report_says_why_a_run_failed() -> None:
    # the docs promise the end of a failed run's output "for the report"; only "exit 1" was shown
    failed = _run(MIB, ok=False)
    failed.output_tail = "Traceback (most recent call last):\n  ...\nValueError: bad size 3" + "\n" * 3
    long = _run(MIB, ok=False)
    long.output_tail = "x" * 5000
    result = _result({"N": [1, 2, 3]}, {(1,): [_run(MIB)], (2,): [failed], (3,): [long]})
    text = TerminalSweepRenderer(width=80).render(analyze(result))
    assert "N=2 (exit 1): ValueError: bad size 3" in text
    assert all(len(line) <= 80 for line in text.splitlines())
