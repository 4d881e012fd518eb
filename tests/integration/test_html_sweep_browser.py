"""The ``memgauge sweep`` HTML page opened in real headless Chromium (see
tests/integration/test_html_browser.py): every chart drawn, no console errors, no network, tables sortable.

Without Chromium or Playwright these tests skip, unless MEMGAUGE_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from memgauge.analysis._sweep import analyze
from memgauge.render import HtmlSweepRenderer
from tests.integration.test_html_browser import assert_clean, assert_drawn, open_report
from tests.sweep_synthetic import synthetic_analysis, synthetic_sweep, synthetic_worker_analysis


def _chart_ids(html: str) -> list[str]:
    data = re.search(r'<script type="application/json" id="memgauge-data">(.*?)</script>', html, re.S)
    assert data is not None
    return [c["id"] for c in json.loads(data.group(1))["charts"]]


@pytest.fixture(scope="module")
def sweep_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    html = HtmlSweepRenderer().render(synthetic_analysis())
    path = tmp_path_factory.mktemp("sweep") / "sweep.html"
    path.write_text(html, encoding="utf-8")
    return path, _chart_ids(html)


def test_sweep_page_draws_every_chart_offline(browser: Any, sweep_page: tuple[Path, list[str]]) -> None:
    path, ids = sweep_page
    opened = open_report(browser, path)
    assert_clean(opened, path)
    assert len(ids) == 6
    states = {i: assert_drawn(opened, i) for i in ids}
    rss = states[ids[0]]
    assert rss["type"] == "scatter"
    labels = [d["label"] for d in rss["datasets"]]
    # per MODEL: the runs, the fitted law, the prediction and its interval
    assert labels[:4] == [
        "MODEL=linear",
        "MODEL=linear: linear",
        "MODEL=linear: predicted",
        "MODEL=linear: 95% interval",
    ]
    # 8 runs of the grid and the confirming run at N=48000
    assert [d["points"] for d in rss["datasets"][:4]] == [9, 40, 1, 2]
    assert rss["datasets"][2]["first"]["x"] == 80000
    scales = opened.page.evaluate(
        "(id) => { const c = Chart.getChart(document.getElementById(id));"
        " return [c.scales.x.type, c.scales.y.type]; }",
        ids[0],
    )
    assert scales == ["logarithmic", "logarithmic"]
    shares = [s for s in states.values() if s["type"] == "bar"]
    assert len(shares) == 2
    assert [d["label"] for d in shares[0]["datasets"]] == ["load", "fit", "other"]
    assert shares[0]["labels"] == ["1000", "2000", "4000", "8000"]
    png = path.with_suffix(".png")
    opened.page.screenshot(path=str(png), full_page=True)
    assert png.stat().st_size > 50_000
    opened.page.close()


def test_sweep_tables_sort_when_a_header_is_clicked(browser: Any, sweep_page: tuple[Path, list[str]]) -> None:
    path, _ = sweep_page
    opened = open_report(browser, path)

    def column(n: int) -> list[float]:
        values: list[str] = opened.page.eval_on_selector_all(
            f"#points tbody tr td:nth-child({n})", "tds => tds.map(td => td.dataset.v)"
        )
        return [float(v) for v in values]

    before = column(5)  # wall time
    assert len(before) == 8 and before != sorted(before)
    opened.page.click("#points thead th:nth-child(5)")
    assert column(5) == sorted(before, reverse=True)
    opened.page.click("#points thead th:nth-child(5)")
    assert column(5) == sorted(before)
    opened.page.close()


def test_worker_scaling_chart_marks_the_knee(browser: Any, tmp_path: Path) -> None:
    html = HtmlSweepRenderer().render(synthetic_worker_analysis())
    path = tmp_path / "workers.html"
    path.write_text(html, encoding="utf-8")
    opened = open_report(browser, path)
    assert_clean(opened, path)
    ids = _chart_ids(html)
    states = [assert_drawn(opened, i) for i in ids]
    (scaling,) = [s for s in states if s["datasets"] and s["datasets"][0]["label"].startswith("speedup")]
    labels = [d["label"] for d in scaling["datasets"]]
    assert labels == ["speedup (items per second)", "ideal", "knee: WORKERS=2"]
    assert scaling["datasets"][2]["first"] == {"x": 2, "y": 1.9}
    assert "knee: adding workers beyond this stops paying" in opened.page.inner_text("#scaling")
    opened.page.screenshot(path=str(tmp_path / "workers.png"), full_page=True)
    opened.page.close()


def test_unsupported_prediction_and_hostile_strings_draw_cleanly(browser: Any, tmp_path: Path) -> None:
    evil = "</script><script>alert('x')</script><img src=x onerror=alert(1)>"
    result = synthetic_sweep()
    result.params["MODEL"] = [evil, "mlp"]
    for point in result.points:
        if point.params["MODEL"] == "linear":
            point.params["MODEL"] = evil
    # 112x the largest size: predicted, but not supported
    html = HtmlSweepRenderer().render(analyze(result, predict_at=("N", 900_000.0, {})))
    path = tmp_path / "hostile.html"
    path.write_text(html, encoding="utf-8")
    opened = open_report(browser, path)
    assert_clean(opened, path)  # no dialog: nothing ran
    for i in _chart_ids(html):
        assert_drawn(opened, i)
    assert "not supported" in opened.page.inner_text("#predictions")
    assert evil in opened.page.inner_text("#points")
    opened.page.close()
