"""The sweep renderers (terminal, JSON, HTML) on hand-built sweep records (tests/sweep_synthetic.py)."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from html.parser import HTMLParser
from typing import Any

import pytest
from rich.cells import cell_len

from memgauge.analysis._sweep import SweepAnalysis, analyze
from memgauge.model._sweep import PhaseSummary, Point, RunSummary, SweepResult, Value
from memgauge.render import (
    HtmlSweepRenderer,
    JsonSweepRenderer,
    MarkdownSweepRenderer,
    TerminalSweepRenderer,
    sweep_json,
)
from memgauge.render._html_page import asset
from memgauge.render._sweep_words import format_metric, format_range, metric_label
from tests.golden_check import check_golden
from tests.sweep_synthetic import (
    MIB,
    synthetic_analysis,
    synthetic_sweep,
    synthetic_worker_analysis,
    synthetic_worker_sweep,
)

EVIL = "</script><script>alert('x')</script><img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def analysis() -> SweepAnalysis:
    return synthetic_analysis()


@pytest.fixture(scope="module")
def workers() -> SweepAnalysis:
    return synthetic_worker_analysis()


def _section(text: str, title: str) -> list[str]:
    """The lines of the section whose title starts with ``title``, up to the next title."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    titles = (
        "points",
        "phases",
        "growth laws",
        "The law",
        "predictions",
        "largest",
        "confirmation",
        "share of",
        "worker",
        "note:",
    )
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(titles)), len(lines))
    return lines[start:end]


# -- terminal -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("width", [100, 60])
def test_terminal_golden(analysis: SweepAnalysis, width: int) -> None:
    check_golden(f"sweep-{width}.txt", TerminalSweepRenderer(width=width).render(analysis))


def test_terminal_golden_workers(workers: SweepAnalysis) -> None:
    check_golden("sweep-workers-80.txt", TerminalSweepRenderer(width=80).render(workers))


def test_terminal_shows_the_law_the_prediction_and_the_largest_size(analysis: SweepAnalysis) -> None:
    out = TerminalSweepRenderer(width=100).render(analysis)
    laws = _section(out, "growth laws")
    rss = [line for line in laws if line.startswith("memory ")]
    assert len(rss) == 2 and all(re.search(r"\blinear\b", line) for line in rss), laws
    assert not any("quadratic" in line.split("(")[0] for line in rss)
    predictions = _section(out, "predictions at N=80,000")
    for row in analysis.predictions:
        assert row.prediction is not None and row.prediction.supported
        if row.metric == "rss":
            value = format_metric("rss", row.prediction.value)
            interval = format_range("rss", row.prediction.low, row.prediction.high)
            line = next(ln for ln in predictions if f"MODEL={row.fixed['MODEL']}" in ln and value in ln)
            assert interval in line and line.rstrip().endswith("ok")
    budget = _section(out, "largest N within the budget")
    for brow in analysis.budget:
        assert brow.largest is not None
        assert any(f"N = {int(brow.largest):,}" in line for line in budget), budget
    confirm = _section(out, "confirmation runs")
    assert any("N=48000" in line and line.rstrip().endswith("fits") for line in confirm)
    assert any("N=52000" in line and line.rstrip().endswith("OVER") for line in confirm)
    shares = _section(out, "share of wall time by phase, vs N (MODEL=linear)")
    assert shares[1].split() == ["N", "load", "fit", "other"]
    assert shares[2].split() == ["1000", "40%", "32%", "28%"]
    # every top-level phase has its peak and time per point
    phases = _section(out, "phases")
    assert "load peak / time" in phases[1] and "fit peak / time" in phases[1]
    assert "40.0 MiB / 200 ms" in phases[2]


def test_terminal_worker_scaling_marks_the_knee(workers: SweepAnalysis) -> None:
    out = TerminalSweepRenderer(width=100).render(workers)
    scaling = _section(out, "worker scaling")
    knee = [line for line in scaling if "← knee" in line]
    assert len(knee) == 1 and knee[0].split()[:4] == ["2", "190/s", "1.90x", "95%"], scaling
    assert any(line.split()[:3] == ["8", "205/s", "2.05x"] for line in scaling)
    assert "The knee is the first worker count" in out
    # a worker count is no size: no growth law is fitted against it
    assert "growth laws" not in out and "·N" not in out


@pytest.mark.parametrize("width", [60, 61, 67, 72, 80, 88, 100, 113, 120, 140, 160, 200])
def test_terminal_fits_every_width_and_never_cuts_a_figure(
    analysis: SweepAnalysis, workers: SweepAnalysis, width: int
) -> None:
    for a in (analysis, workers):
        out = TerminalSweepRenderer(width=width).render(a)
        for line in out.splitlines():
            assert cell_len(line) <= width, (width, line)
    out = TerminalSweepRenderer(width=width).render(analysis)
    # the figures that matter are whole at every width: no "809 Mi" / "B" on the next line
    for row in analysis.predictions:
        assert row.prediction is not None
        assert format_metric(row.metric, row.prediction.value) in out
    for brow in analysis.budget:
        assert brow.largest is not None and f"N = {int(brow.largest):,}" in out
    assert "40.0 MiB / 200 ms" in out or "left out to fit the width" in out


def test_terminal_strings_from_the_record_are_not_markup() -> None:
    result = synthetic_sweep()
    result.command = ["python", "[bold]train[/].py", "[/]"]
    result.params["MODEL"] = ["[bold]x", "[red]mlp[/red]"]
    for point in result.points:
        point.params["MODEL"] = "[bold]x" if point.params["MODEL"] == "linear" else "[red]mlp[/red]"
        for run in point.runs:
            run.phases = {("[i]load[/i]" if k == "load" else k): v for k, v in run.phases.items()}
    a = analyze(result, predict_at=("N", 80000.0, {}), limits=[("rss", 512 * MIB, "rss=[b]512MiB")])
    out = TerminalSweepRenderer(width=120).render(a)
    assert "python '[bold]train[/].py' '[/]'" in out
    assert "[bold]x" in out and "[red]mlp[/red]" in out
    assert "[i]load[/i] peak / time" in out
    assert "rss=[b]512MiB" in out
    # and in colour too (markup would be parsed there first)
    coloured = TerminalSweepRenderer(width=120, color=True).render(a)
    assert "[bold]x" in coloured and "[i]load[/i]" in coloured


def test_terminal_unsupported_prediction_is_marked_and_its_figure_bracketed() -> None:
    a = analyze(synthetic_sweep(confirmations=False), predict_at=("N", 2_000_000.0, {"MODEL": "linear"}))
    (row,) = [r for r in a.predictions if r.metric == "rss"]
    assert row.prediction is not None and not row.prediction.supported
    out = TerminalSweepRenderer(width=140).render(a)
    line = next(ln for ln in out.splitlines() if ln.startswith("memory ") and "not supported" in ln)
    assert f"({format_metric('rss', row.prediction.value)})" in line
    assert "not supported: N=2e+06 is 250x the largest size measured" in out
    assert re.search(r"\bok\b", line) is None


def test_terminal_failed_runs_and_an_interrupted_sweep() -> None:
    result = synthetic_sweep()
    result.complete = False
    run = result.points[0].runs[1]
    result.points[0].runs[1] = dataclasses.replace(run, ok=False, exit="killed by the OOM killer")
    result.points[1].runs[1] = RunSummary(ok=False, exit="not measured", error="no profile")
    result.points.append(Point({"N": 16000, "MODEL": "linear"}, []))
    out = TerminalSweepRenderer(width=120).render(analyze(result))
    assert "interrupted" in out.splitlines()[1]
    points = _section(out, "points")
    assert any("1/2 failed: killed by the OOM killer" in line for line in points), points
    assert any("1/2 failed: not measured: no profile" in line for line in points), points
    assert any(line.split()[:2] == ["16000", "linear"] and "not run" in line for line in points)
    assert "note: 2 run(s) failed or were stopped" in out
    assert "note: the sweep was interrupted" in out


def test_budget_statuses_and_the_binding_limit() -> None:
    limits = [("rss", 512 * MIB, "rss=512MiB"), ("wall", 5.0, "wall=5s"), ("rss", 20 * MIB, "rss=20MiB")]
    a = analyze(synthetic_sweep(), limits=limits)
    out = TerminalSweepRenderer(width=160).render(a)
    budget = _section(out, "largest N within the budget")
    over = [line for line in budget if line.startswith("rss=20MiB")]
    assert len(over) == 2 and all("none fits" in line and "binding; even N=1000" in line for line in over)
    assert any(line.startswith("wall=5s") and "N = " in line for line in budget)
    html = HtmlSweepRenderer().render(a)
    assert "none fits" in html and "<b>binding</b>" in html
    two = SweepResult(["p"], {"N": [10, 20]}, 1, "local", None)
    two.points = [Point({"N": n}, [RunSummary(ok=True, exit="exit 0", rss_bytes=n * MIB)]) for n in (10, 20)]
    out = TerminalSweepRenderer(width=100).render(analyze(two, limits=[("rss", 512 * MIB, "rss=512MiB")]))
    (row,) = _section(out, "largest N within the budget")[2:]
    assert "unknown" in row and "3 sizes are needed to choose a law; measured 2" in row


def test_phase_shares_are_shown_smallest_size_first() -> None:
    result = synthetic_sweep()
    result.points.reverse()  # as run with N=8000,4000,2000,1000
    a = analyze(result)
    assert a.shares[0].xs[0] == 8000
    out = TerminalSweepRenderer(width=100).render(a)
    shares = _section(out, "share of wall time by phase, vs N (MODEL=linear)")
    assert [line.split()[0] for line in shares[2:]] == ["1000", "2000", "4000", "8000"]
    _, data = _parsed(HtmlSweepRenderer().render(a))
    chart = next(c for c in data["charts"] if c["kind"] == "shares")
    assert chart["labels"] == ["1000", "2000", "4000", "8000"]
    assert chart["values"][0][0] == pytest.approx(40.1, abs=0.1)  # load at N=1000


def test_terminal_leaves_out_sections_with_nothing_to_show() -> None:
    result = SweepResult(["prog"], {"N": [1, 2]}, 1, "local", None)
    out = TerminalSweepRenderer(width=80).render(analyze(result))
    assert out.splitlines()[:2] == [
        "memgauge sweep prog",
        "engine local · repeat 1 · 0 of 2 points measured · complete",
    ]
    for title in ("points", "phases", "growth", "predictions", "largest", "share of", "worker"):
        assert not any(line.startswith(title) for line in out.splitlines()), out


# -- JSON ---------------------------------------------------------------------------------------------


def test_json_has_the_record_and_every_analysis(analysis: SweepAnalysis) -> None:
    text = JsonSweepRenderer().render(analysis)
    data = json.loads(text)
    # the record comes first, unchanged: a JSON report loads as a record again
    assert SweepResult.from_dict(data).to_dict() == analysis.result.to_dict()
    json.dumps(data, allow_nan=False)
    a = data["analysis"]
    assert set(a) == {"size", "laws", "predictions", "budget", "binding", "phase_shares", "scaling", "notes"}
    assert a["size"] == "N"
    law = next(r for r in a["laws"] if r["metric"] == "rss" and r["fixed"] == {"MODEL": "linear"})
    assert set(law) == {
        "metric", "param", "fixed", "law", "formula", "a", "b", "k", "r2", "rms_relative", "aicc",
        "candidates", "criterion", "observations",
    }  # fmt: skip
    assert law["law"] == "linear" and law["observations"] == 8
    assert law["formula"].endswith("·N")
    assert 30 * MIB < law["a"] < 31 * MIB and 10_000 < law["b"] < 10_500
    assert {c["law"] for c in law["candidates"]} >= {"constant", "linear", "power"}
    pred = next(r for r in a["predictions"] if r["metric"] == "rss" and r["fixed"] == {"MODEL": "linear"})
    assert pred["x"] == 80000 and pred["supported"] and pred["reason"] is None
    assert pred["low"] < pred["value"] < pred["high"] and pred["law"] == "linear"
    (budget,) = [b for b in a["budget"] if b["fixed"] == {"MODEL": "linear"}]
    assert budget["status"] == "fits" and budget["largest"] == 48790
    assert budget["high"] <= budget["limit"] == 512 * MIB
    assert 0.9 < budget["margin_used"] <= 1
    assert len(a["binding"]) == 2
    shares = a["phase_shares"][0]
    assert shares["phases"] == ["load", "fit"]
    assert shares["points"][0]["x"] == 1000
    assert math.isclose(sum(shares["points"][0]["shares"].values()) + shares["points"][0]["other"], 1)
    assert data["confirmations"][1]["run"]["rss_bytes"] > data["confirmations"][1]["limit"]


def test_json_scaling_and_infinities_become_null(workers: SweepAnalysis) -> None:
    data = sweep_json(workers)
    text = json.dumps(data, allow_nan=False)
    assert "Infinity" not in text and "NaN" not in text
    (row,) = data["analysis"]["scaling"]
    assert row["param"] == "WORKERS" and row["metric"] == "items" and row["knee"] == 2
    assert [p["workers"] for p in row["points"]] == [1, 2, 4, 8]
    assert [round(p["speedup"], 2) for p in row["points"]] == [1.0, 1.9, 2.0, 2.05]
    assert row["criterion"].startswith("The knee is")
    # 4 runs cannot compare a 3-parameter law: its AICc is infinite, and null here
    four = SweepResult(["p"], {"N": [1, 2, 4, 8]}, 1, "local", None)
    four.points = [
        Point({"N": n}, [RunSummary(ok=True, exit="exit 0", rss_bytes=(10 + n) * MIB)]) for n in (1, 2, 4, 8)
    ]
    law = next(r for r in sweep_json(analyze(four))["analysis"]["laws"] if r["metric"] == "rss")
    power = next(c for c in law["candidates"] if c["law"] == "power")
    assert power["aicc"] is None
    # two sizes, one run each: the interval is unbounded
    two = SweepResult(["p"], {"N": [10, 20]}, 1, "local", None)
    two.points = [Point({"N": n}, [RunSummary(ok=True, exit="exit 0", rss_bytes=n * MIB)]) for n in (10, 20)]
    data = sweep_json(analyze(two, predict_at=("N", 40.0, {})))
    pred = next(r for r in data["analysis"]["predictions"] if r["metric"] == "rss")
    assert pred["low"] is None and pred["high"] is None and not pred["supported"]
    json.dumps(data, allow_nan=False)


def test_json_of_a_sweep_with_no_growth() -> None:
    one = SweepResult(["p"], {"N": [10, 20]}, 1, "local", None)
    one.points = [Point({"N": 10}, [RunSummary(ok=True, exit="exit 0", rss_bytes=MIB)])]
    data = sweep_json(analyze(one, predict_at=("N", 40.0, {}), limits=[("rss", MIB, "rss=1MiB")]))
    pred = next(r for r in data["analysis"]["predictions"] if r["metric"] == "rss")
    assert pred["value"] is None and pred["supported"] is False and pred["reason"]
    assert data["analysis"]["budget"][0]["status"] == "unknown"


# -- HTML ---------------------------------------------------------------------------------------------


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.canvases: list[str] = []
        self.tables = 0
        self.csp = ""
        self.data = ""
        self._in_data = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "canvas":
            self.canvases.append(a["id"] or "")
        if tag == "table":
            self.tables += 1
        if tag == "meta" and a.get("http-equiv") == "Content-Security-Policy":
            self.csp = a["content"] or ""
        self._in_data = tag == "script" and a.get("id") == "memgauge-data"

    def handle_data(self, data: str) -> None:
        if self._in_data:
            self.data += data

    def handle_endtag(self, tag: str) -> None:
        self._in_data = False


def _parsed(html: str) -> tuple[_Page, dict[str, Any]]:
    page = _Page()
    page.feed(html)
    return page, json.loads(page.data)


def test_html_has_the_tables_and_the_charts_data(analysis: SweepAnalysis) -> None:
    html = HtmlSweepRenderer().render(analysis)
    page, data = _parsed(html)
    assert page.csp.startswith("default-src 'none'")
    assert data["kind"] == "sweep"
    assert page.canvases == [c["id"] for c in data["charts"]]
    kinds = [(c["kind"], c.get("metric")) for c in data["charts"]]
    assert kinds[:2] == [("growth", "rss"), ("growth", "wall")]
    assert kinds.count(("shares", None)) == 2
    assert ("growth", "phase:load.peak") in kinds and ("growth", "phase:fit.peak") in kinds
    rss = data["charts"][0]
    assert rss["param"] == "N" and rss["unit"] == "bytes" and rss["logX"] and rss["logY"]
    assert [s["label"] for s in rss["series"]] == ["MODEL=linear", "MODEL=mlp"]
    linear = rss["series"][0]
    # 8 runs of the grid and the confirming run at N=48000, a measurement like the others
    assert len(linear["runs"]) == 9 and linear["law"] == "linear"
    assert len(linear["fit"]) == 40
    assert linear["fit"][0][0] == 1000 and math.isclose(linear["fit"][-1][0], 80000)
    p = linear["prediction"]
    assert p["x"] == 80000 and p["low"] < p["value"] < p["high"] and p["supported"]
    # growth laws, predictions, budget, confirmations, points, phases, 2 shares
    assert page.tables == 8
    assert "N = 48,790" in html and "<b>linear</b>" in html
    assert "809 MiB" in html and "OVER" in html


def test_html_worker_scaling_chart(workers: SweepAnalysis) -> None:
    _, data = _parsed(HtmlSweepRenderer().render(workers))
    (scaling,) = [c for c in data["charts"] if c["kind"] == "scaling"]
    assert scaling["workers"] == [1, 2, 4, 8] and scaling["knee"] == 2
    assert [round(s, 2) for s in scaling["speedup"]] == [1.0, 1.9, 2.0, 2.05]
    html = HtmlSweepRenderer().render(workers)
    assert "← knee: adding workers beyond this stops paying" in html


def test_html_escapes_strings_from_the_record() -> None:
    result = synthetic_sweep()
    result.command = ["python", EVIL]
    result.params["MODEL"] = [EVIL, "mlp"]
    for point in result.points:
        if point.params["MODEL"] == "linear":
            point.params["MODEL"] = EVIL
        for run in point.runs:
            run.phases = {(EVIL if k == "load" else k): v for k, v in run.phases.items()}
    a = analyze(result, predict_at=("N", 80000.0, {}), limits=[("rss", 512 * MIB, EVIL)])
    html = HtmlSweepRenderer().render(a)
    assert EVIL not in html
    assert "<img" not in html and "alert('x')</script>" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    page, data = _parsed(html)
    # the data keeps the strings, as data, for the page script to put in labels
    assert any(
        s["label"] == f"MODEL={EVIL}" for c in data["charts"] if c["kind"] == "growth" for s in c["series"]
    )
    assert page.canvases == [c["id"] for c in data["charts"]]


def test_html_caps_charts_and_rows() -> None:
    sizes = list(range(100, 100 + 60 * 10, 10))
    phases = {f"p{i}": PhaseSummary(seconds=0.01 * (i + 1), peak_bytes=(i + 1) * MIB) for i in range(10)}
    # 2 + 2 shares + 10 phase peaks: more charts than the cap
    params: dict[str, list[Value]] = {"N": list(sizes), "M": ["a", "b"]}
    result = SweepResult(["p"], params, 1, "local", None)
    result.points = [
        Point(
            {"N": n, "M": m},
            [RunSummary(ok=True, exit="exit 0", rss_bytes=n * MIB, wall_seconds=n / 100, phases=phases)],
        )
        for n in sizes
        for m in ("a", "b")
    ]
    html = HtmlSweepRenderer().render(analyze(result))
    page, data = _parsed(html)
    assert len(data["charts"]) == 12 == len(page.canvases)
    assert "70 more rows not shown." in html  # 120 points, 50 shown
    assert len(html) < 2_000_000


def test_html_with_an_unsupported_prediction_and_nothing_fitted() -> None:
    a = analyze(synthetic_sweep(confirmations=False), predict_at=("N", 2_000_000.0, {}))
    html = HtmlSweepRenderer().render(a)
    assert "not supported: N=2e+06 is 250x the largest size measured" in html
    _, data = _parsed(html)
    p = data["charts"][0]["series"][0]["prediction"]
    assert p["supported"] is False and p["text"].startswith("(")
    empty = SweepResult(["p"], {"N": [1, 2]}, 1, "local", None)
    page, data = _parsed(HtmlSweepRenderer().render(analyze(empty)))
    assert data["charts"] == [] and page.canvases == []


def test_metric_labels() -> None:
    assert [metric_label(m) for m in ("rss", "wall", "cpu")] == ["memory", "wall time", "CPU time"]
    assert metric_label("phase:load.peak") == "phase load: peak"
    assert metric_label("phase:load.seconds") == "phase load: time"
    assert metric_label("phase:a.b.peak") == "phase a.b: peak"
    assert metric_label("metric:items") == "items"
    assert metric_label("throughput:items") == "items/s"
    assert format_range("rss", 1.1 * 2**30, 1.3 * 2**30) == "1.1\u20131.3 GiB"
    assert format_range("rss", -math.inf, math.inf) == "unbounded"
    assert format_range("wall", 0.5, 2.0) == "500 ms\u20132.00 s"
    assert synthetic_worker_sweep().varied() == ["WORKERS"]


# -- golden files of the page and of the troubles -----------------------------------------------------


def troubled_analysis() -> SweepAnalysis:
    """Every branch the reports word: failed and unmeasured runs, an interrupted sweep, a point
    never run, an unsupported prediction, and the budget's statuses (none fits, binding)."""
    result = synthetic_sweep()
    result.complete = False
    run = result.points[0].runs[1]
    result.points[0].runs[1] = dataclasses.replace(
        run, ok=False, exit="killed by the OOM killer", output_tail="Traceback\n  MemoryError: [bold]x\n"
    )
    result.points[1].runs[1] = RunSummary(ok=False, exit="not measured", error="no profile")
    result.points.append(Point({"N": 16000, "MODEL": "linear"}, []))
    limits = [("rss", 512 * MIB, "rss=512MiB"), ("wall", 5.0, "wall=5s"), ("rss", 20 * MIB, "rss=20MiB")]
    return analyze(result, predict_at=("N", 2_000_000.0, {"MODEL": "linear"}), limits=limits)


def _without_assets(html: str) -> str:
    """The page less its inlined stylesheet, Chart.js and page script: the same on every page, and
    not the sweep report's."""
    for name in ("report.css", "chart.umd.min.js", "report.js"):
        html = html.replace(asset(name), f"[{name}]")
    return html


@pytest.mark.parametrize("width", [100, 60])
def test_terminal_golden_troubles(width: int) -> None:
    out = TerminalSweepRenderer(width=width).render(troubled_analysis())
    check_golden(f"sweep-troubles-{width}.txt", out)


def small_analysis() -> SweepAnalysis:
    """Two sizes: too few for a law, so the budget's largest size is unknown."""
    two = SweepResult(["p"], {"N": [10, 20]}, 1, "local", None)
    # not through zero: an intercept of zero would be written as its rounding error
    runs = {n: [RunSummary(ok=True, exit="exit 0", rss_bytes=(30 + n) * MIB)] for n in (10, 20)}
    two.points = [Point({"N": n}, r) for n, r in runs.items()]
    return analyze(two, limits=[("rss", 512 * MIB, "rss=512MiB")])


def test_terminal_golden_small() -> None:
    check_golden("sweep-small-80.txt", TerminalSweepRenderer(width=80).render(small_analysis()))


@pytest.mark.parametrize("name", ["sweep", "sweep-workers", "sweep-troubles", "sweep-small"])
def test_html_golden(name: str) -> None:
    analyses = {
        "sweep": synthetic_analysis,
        "sweep-workers": synthetic_worker_analysis,
        "sweep-troubles": troubled_analysis,
        "sweep-small": small_analysis,
    }
    check_golden(f"{name}.html", _without_assets(HtmlSweepRenderer().render(analyses[name]())))


# -- Markdown -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["sweep", "sweep-troubles"])
def test_markdown_golden(name: str) -> None:
    a = synthetic_analysis() if name == "sweep" else troubled_analysis()
    check_golden(f"{name}.md", MarkdownSweepRenderer().render(a))


def test_markdown_has_the_terminals_tables_with_every_column(analysis: SweepAnalysis) -> None:
    md = MarkdownSweepRenderer().render(analysis)
    assert md.startswith("### memgauge sweep `python train.py --epochs 3`\n\n")
    assert "| N | MODEL | peak | peak min\u2013max | wall | CPU | exit | items |" in md
    assert "| metric | with | law | fit | R² | RMS error | runner-up (ΔAICc) |" in md
    # the figures that answer are bold, as on the terminal
    assert "| rss=512MiB | MODEL=linear | **N = 48,790** | 505 MiB |" in md
    assert "**OVER**" in md and "left out to fit the width" not in md
