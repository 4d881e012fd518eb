"""The training sections of the reports, from a real ``memgauge run`` of a CPU loop whose loader
sleeps: the HTML page's rate and wait-vs-compute charts drawn in headless Chromium with the
figures table, and the terminal and Markdown tables with the verdict; a profile without training
figures gets no section."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memgauge import load_profile
from memgauge.render import HtmlRenderer, MarkdownRenderer
from tests.conftest import run_memgauge
from tests.factories import make_profile
from tests.integration.test_html_browser import assert_clean, assert_drawn, open_report
from tests.integration.test_training_run import PLAIN, STEPS, TRAIN

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("training")
    (tmp / "loop.py").write_text(TRAIN)
    html = tmp / "report.html"
    r = run_memgauge(
        ["-q", "--html", str(html), "loop.py", str(tmp / "own.json")],
        tmp,
        env={"XDG_CACHE_HOME": str(tmp / "cache")},
    )
    assert r.returncode == 0, r.stderr
    path = tmp / "profile.json"
    assert r.profile is not None and r.profile["training"]["steps"] == STEPS
    return path, html


def test_the_html_report_draws_rates_and_waits_over_the_steps(browser: Any, run: tuple[Path, Path]) -> None:
    path, html = run
    training = load_profile(path).training
    assert training is not None
    opened = open_report(browser, html)
    assert_clean(opened, html)
    rate = assert_drawn(opened, "chart-training-rate")
    assert rate["labels"] == [str(i) for i in range(STEPS)]
    assert rate["datasets"][0]["first"] == pytest.approx(1 / (training.rows[0].seconds or 1), rel=1e-3)
    wait = assert_drawn(opened, "chart-training-wait")
    assert [d["label"] for d in wait["datasets"]] == ["waiting for data", "the rest of the step"]
    assert wait["datasets"][0]["first"] == pytest.approx(training.rows[0].wait_seconds, abs=1e-6)
    cpu = assert_drawn(opened, "chart-training-cpu")
    main = next(p for p in training.processes if p.role == "main loop")
    assert f"main loop ({main.pid})" in cpu["labels"]
    # CPU over time: the watcher samples every 200 ms, and the loop runs longer than that
    assert training.cpu is not None and training.cpu.t_seconds, training.cpu
    cpu_time = assert_drawn(opened, "chart-training-cpu-time")
    assert any(d["label"].startswith("main loop") for d in cpu_time["datasets"]), cpu_time["datasets"]
    assert opened.page.inner_text("nav a[href='#training']") == "training"
    section = opened.page.inner_text("#training")
    assert "data wait share" in section and "FLOPs per step" in section and training.verdict in section


def test_terminal_and_markdown_show_the_figures_and_the_verdict(run: tuple[Path, Path]) -> None:
    path, _ = run
    training = load_profile(path).training
    assert training is not None
    md = MarkdownRenderer().render(load_profile(path))
    assert f"**training throughput: bound by {training.bound}**" in md
    assert "| MFU |" in md and "| data wait share |" in md
    out = subprocess.run(
        [sys.executable, "-m", "memgauge", "view", "--width", "200", "--no-color", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "training throughput" in out and "steps/s if compute were free" in out
    assert " ".join(training.verdict.split()[:6]) in " ".join(out.split())


def test_reports_of_a_profile_without_training_have_no_training_section() -> None:
    p = make_profile()
    page = HtmlRenderer().render(p)
    body, rest = page.split('<script type="application/json" id="memgauge-data">', 1)
    assert 'id="training"' not in body and "chart-training" not in body
    assert "training" not in json.loads(rest.split("</script>", 1)[0])
    assert "training" not in MarkdownRenderer().render(p)


def test_the_html_page_carries_each_steps_rate_and_wait(run: tuple[Path, Path]) -> None:
    path, html = run
    training = load_profile(path).training
    assert training is not None
    page = html.read_text()
    body, rest = page.split('<script type="application/json" id="memgauge-data">', 1)
    data = json.loads(rest.split("</script>", 1)[0])["training"]
    assert 'id="chart-training-rate"' in body and 'id="chart-training-wait"' in body
    assert data["labels"] == [str(r.index) for r in training.rows]
    for row, wait, rest_of_step in zip(training.rows, data["wait"], data["compute"], strict=True):
        assert wait + rest_of_step == pytest.approx(row.seconds, abs=2e-6)
    assert data["warmup"] == [r.warmup or r.flops_counted for r in training.rows]


def test_tensorboard_scalars_are_the_profiles_figures(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    (tmp_path / "loop.py").write_text(PLAIN)
    board = tmp_path / "board"
    r = run_memgauge(["-q", "--tensorboard", str(board), "loop.py", str(tmp_path / "own.json")], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.profile is not None
    training = r.profile["training"]
    events = EventAccumulator(str(board))
    events.Reload()
    seconds = {e.step: e.value for e in events.Scalars("memgauge/step_seconds")}
    assert seconds == {row["index"]: pytest.approx(row["seconds"], rel=1e-6) for row in training["rows"]}
    (rate,) = events.Scalars("memgauge/steady/steps_per_second")
    assert rate.value == pytest.approx(training["steps_per_second"], rel=1e-6)
    (peak,) = events.Scalars("memgauge/peak_resident_bytes")
    assert peak.value == pytest.approx(r.profile["peak"]["resident_bytes"], rel=1e-6)


def test_tensorboard_without_a_directory_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    (tmp_path / "loop.py").write_text("print(1)")
    r = run_memgauge(["-q", "--tensorboard", str(tmp_path / "file"), "loop.py"], tmp_path)
    assert r.returncode == 64 and "--tensorboard" in r.stderr and "not a directory" in r.stderr


def test_check_judges_lower_bounds_on_the_measured_rates(tmp_path: Path) -> None:
    (tmp_path / "loop.py").write_text(PLAIN)

    def check(budget: str) -> tuple[int, dict[str, Any]]:
        verdict = tmp_path / "verdict.json"
        cmd = [sys.executable, "-m", "memgauge", "check", "--budget", budget, "--format", "json"]
        r = subprocess.run(
            [*cmd, "-o", str(verdict), "loop.py", str(tmp_path / "own.json")],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
        )
        assert verdict.exists(), r.stderr
        return r.returncode, json.loads(verdict.read_text())

    # the loop sleeps 20 ms and computes 10 ms a step: about 33 steps/s, 167 samples/s
    code, ok = check("steps_per_s>=5 samples_per_s>=25 data_wait=90%")
    assert code == 0 and [r["status"] for r in ok["results"]] == ["pass", "pass", "pass"]
    code, slow = check("samples_per_s>=100000")
    assert code == 1
    (result,) = slow["results"]
    assert result["status"] == "fail" and result["lower"] is True and result["margin"] < 0
