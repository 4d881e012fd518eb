"""HTML reports opened in real headless Chromium (Debian's, at /usr/bin/chromium, driven by
Playwright): charts drawn, no console errors, no network, the limits of a one-hour profile.

Without Chromium or Playwright these tests skip, unless MEMGAUGE_REQUIRE_BROWSER=1 (CI sets it),
which turns the skip into a failure.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from memgauge import Profile
from memgauge.analysis import compare
from memgauge.model._profile import Attribution, CpuTimes, ExitStatus, LineStats, Peak, PhaseRecord, Timeline
from memgauge.render import HtmlComparisonRenderer, HtmlRenderer
from tests.conftest import MIB, PROGRAMS, marker, run_memgauge
from tests.synthetic import long_profile


@dataclass
class Opened:
    page: Any
    console: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    load_seconds: float = 0.0


def open_report(browser: Any, path: Path) -> Opened:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    opened = Opened(page)
    page.on("console", lambda m: opened.console.append((m.type, m.text)))
    page.on("pageerror", lambda e: opened.errors.append(str(e)))
    page.on("request", lambda r: opened.requests.append(r.url))

    def dialog(d: Any) -> None:
        opened.dialogs.append(d.message)
        d.dismiss()

    page.on("dialog", dialog)
    start = time.perf_counter()
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-rendered], body[data-failed]", state="attached", timeout=15_000)
    opened.load_seconds = time.perf_counter() - start
    return opened


def assert_clean(opened: Opened, path: Path) -> None:
    page = opened.page
    assert page.get_attribute("body", "data-failed") is None, page.inner_text("#memgauge-error")
    assert page.get_attribute("body", "data-rendered") == "true"
    assert opened.errors == []
    assert [m for m in opened.console if m[0] in ("error", "warning")] == []
    # offline: the page itself, nothing else
    assert opened.requests == [path.as_uri()]
    assert opened.dialogs == []


def chart_state(opened: Opened, canvas_id: str) -> dict[str, Any]:
    """What Chart.js holds for a canvas, and how many of its pixels were painted."""
    state: dict[str, Any] = opened.page.evaluate(
        """(id) => {
            const canvas = document.getElementById(id);
            if (!canvas) return {exists: false};
            const chart = Chart.getChart(canvas);
            const ctx = canvas.getContext('2d');
            const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
            let painted = 0;
            for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) painted++;
            return {
                exists: true,
                chart: !!chart,
                type: chart ? chart.config.type : null,
                datasets: chart ? chart.data.datasets.map(d => ({label: d.label, points: d.data.length,
                    first: d.data[0]})) : [],
                labels: chart ? chart.data.labels || [] : [],
                yMax: chart && chart.scales.y ? chart.scales.y.max : null,
                width: canvas.width, height: canvas.height, painted: painted,
            };
        }""",
        canvas_id,
    )
    return state


def assert_drawn(opened: Opened, canvas_id: str) -> dict[str, Any]:
    state = chart_state(opened, canvas_id)
    assert state["exists"], f"no #{canvas_id}"
    assert state["chart"], f"#{canvas_id} has no chart"
    assert state["width"] > 300 and state["height"] > 100
    # axes, grid and data: thousands of pixels; an empty canvas has none
    assert state["painted"] > 0.02 * state["width"] * state["height"], state
    return state


@pytest.fixture(scope="module")
def spike_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A real run: 200 MiB kept, then a freed 800 MiB spike (tests/programs/lines_spike.py)."""
    tmp = tmp_path_factory.mktemp("spike")
    html = tmp / "report.html"
    result = run_memgauge(["--html", str(html), str(PROGRAMS / "lines_spike.py")], tmp)
    assert result.returncode == 0, result.stderr
    assert result.profile is not None
    assert f"report: {html}" in result.stderr
    return html, result.profile


def test_real_report_draws_every_chart_offline(
    browser: Any, spike_report: tuple[Path, dict[str, Any]]
) -> None:
    html, data = spike_report
    profile = Profile.from_dict(data)
    opened = open_report(browser, html)
    assert_clean(opened, html)
    memory = assert_drawn(opened, "chart-memory")
    labels = [d["label"] for d in memory["datasets"]]
    peak_label = next(label for label in labels if label.startswith("peak "))
    # the marker sits on the measured peak, and the axis reaches it
    peak_set = next(d for d in memory["datasets"] if d["label"] == peak_label)
    assert peak_set["first"]["y"] == profile.peak.resident_bytes
    assert memory["yMax"] >= profile.peak.resident_bytes
    samples = len(profile.timeline.t_seconds)
    assert any(d["points"] == samples for d in memory["datasets"])
    assert_drawn(opened, "chart-cpu")
    assert_drawn(opened, "chart-imports")
    # the spike's line holds the peak, and the page says so with its source
    first_row = opened.page.inner_text("#peak tbody tr:first-child")
    assert "block = np.ones(800 * MIB // 8)" in first_row
    assert f"lines_spike.py:{marker(PROGRAMS / 'lines_spike.py', 'spike')}" in first_row
    # the freed spike is advised on, with its figures beside it
    advice = opened.page.inner_text("#advice [data-kind=temporaries]")
    assert f"lines_spike.py:{marker(PROGRAMS / 'lines_spike.py', 'spike')}" in advice
    assert "held at the peak" in advice
    png = html.with_suffix(".png")
    opened.page.screenshot(path=str(png), full_page=True)
    assert png.stat().st_size > 50_000  # a page of charts and tables, not a blank one
    opened.page.close()


def test_tables_sort_when_a_header_is_clicked(
    browser: Any, spike_report: tuple[Path, dict[str, Any]]
) -> None:
    html, _ = spike_report
    opened = open_report(browser, html)

    def column(n: int) -> list[float]:
        values: list[str] = opened.page.eval_on_selector_all(
            f"#lines tbody tr td:nth-child({n})", "tds => tds.map(td => td.dataset.v)"
        )
        return [float(v) for v in values]

    before = column(4)  # CPU seconds
    opened.page.click("#lines thead th:nth-child(4)")
    descending = column(4)
    opened.page.click("#lines thead th:nth-child(4)")
    ascending = column(4)
    assert descending == sorted(before, reverse=True)
    assert ascending == sorted(before)
    assert len(before) > 2
    opened.page.close()


def test_one_hour_profile_report_is_small_and_fast(browser: Any, tmp_path: Path) -> None:
    profile = long_profile(hours=1.0)
    html = tmp_path / "long.html"
    html.write_text(HtmlRenderer().render(profile), encoding="utf-8")
    size = html.stat().st_size
    assert size < 5 * 1024 * 1024, f"{size / MIB:.1f} MiB"
    opened = open_report(browser, html)
    assert_clean(opened, html)
    rendered_ms = opened.page.evaluate("window.memgaugeRenderMs")
    print(f"one-hour report: {size / 1024:.0f} KiB, rendered {rendered_ms:.0f} ms after navigation")
    assert rendered_ms < 2000
    assert opened.load_seconds < 2.0
    memory = assert_drawn(opened, "chart-memory")
    # the tree, the cgroup, and at most 8 processes; the peak marker
    assert 3 <= len(memory["datasets"]) <= 11
    assert_drawn(opened, "chart-phases")
    # 8202 phase records are summed by name, not listed
    assert opened.page.locator("#phases tbody tr").count() == 4
    assert opened.page.locator("#lines tbody tr").count() == 100
    opened.page.close()


def _hostile_profile() -> Profile:
    evil = "</script><script>alert('x')</script><img src=x onerror=alert(1)>"
    return Profile(
        command=["python", evil],
        exit=ExitStatus(code=0),
        wall_seconds=2.0,
        cpu=CpuTimes(1.0, 0.1),
        peak=Peak(
            resident_bytes=300 * MIB,
            method="sampled",
            at_seconds=1.0,
            attribution=[Attribution(1, f"/app/{evil}.py", 3, evil, 200 * MIB, [f"/app/{evil}.py:1"], evil)],
        ),
        phases=[PhaseRecord(evil, 1, 0.0, 1.5, 250 * MIB)],
        timeline=Timeline(0.5, [0.0, 0.5, 1.0, 1.5], [10 * MIB, 100 * MIB, 300 * MIB, 20 * MIB]),
        lines=[LineStats(1, f"/app/{evil}.py", 3, evil, 1.0, 0.2, 0.1, 200 * MIB, 100, evil)],
        environment={"note": evil},
    )


def test_strings_from_the_profile_are_text_not_markup(browser: Any, tmp_path: Path) -> None:
    html = tmp_path / "hostile.html"
    html.write_text(HtmlRenderer().render(_hostile_profile()), encoding="utf-8")
    opened = open_report(browser, html)
    assert_clean(opened, html)  # no dialog, no error: nothing ran
    assert "</script><script>alert('x')</script>" in opened.page.inner_text("#peak")
    assert opened.page.locator("img").count() == 0
    assert_drawn(opened, "chart-memory")
    opened.page.close()


def test_comparison_page_draws_grouped_charts(browser: Any, tmp_path: Path) -> None:
    small, big = long_profile(hours=0.1, seed=1), long_profile(hours=0.2, seed=2)
    comparison = compare([small, big], ["small", "big"])
    html = tmp_path / "compare.html"
    html.write_text(HtmlComparisonRenderer().render(comparison), encoding="utf-8")
    opened = open_report(browser, html)
    assert_clean(opened, html)
    peaks = assert_drawn(opened, "chart-compare-peaks")
    assert [d["label"] for d in peaks["datasets"]] == ["small", "big"]
    assert "resident peak" in peaks["labels"]
    assert_drawn(opened, "chart-compare-times")
    phases = assert_drawn(opened, "chart-compare-phases")
    assert phases["labels"] == ["load", "epoch", "batch", "save"]
    assert_drawn(opened, "chart-compare-phase-times")
    opened.page.close()
