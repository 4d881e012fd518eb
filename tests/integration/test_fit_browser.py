"""The ``memgauge fit --html`` page with its remedy table, from a real fit of a small program,
opened in real headless Chromium (see tests/integration/test_html_browser.py): the curve drawn with
the budget's line, the remedy table the same as the fit's JSON record, no console errors, no network.

Without Chromium or Playwright these tests skip, unless MEMGAUGE_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memgauge._units import format_bytes
from memgauge.watcher import create_memory_group
from tests.conftest import MIB, PROGRAMS
from tests.integration.test_html_browser import assert_clean, assert_drawn, open_report

BUDGET_MIB = (
    60  # fit_batch.py grows 512 KiB per batch item: the answer is near 70 (tests/.../test_fit_search.py)
)


@pytest.fixture(scope="module")
def fit_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    group, reason = create_memory_group("auto")
    if group is None:
        pytest.skip(f"no memory cgroup for the fit's verification: {reason}")
    group.close()
    tmp = tmp_path_factory.mktemp("fit")
    html, record = tmp / "fit.html", tmp / "fit.json"
    argv = [
        "fit",
        str(PROGRAMS / "fit_batch.py"),
        "--param",
        "BATCH_SIZE",
        "--budget",
        f"rss={BUDGET_MIB}MiB",
    ]
    argv += ["--margin", "2%", "--remedies", "--html", str(html), "--json", str(record)]
    proc = subprocess.run(
        [sys.executable, "-m", "memgauge", *argv], capture_output=True, text=True, cwd=tmp, timeout=500
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return html, json.loads(record.read_text())


def test_fit_page_draws_the_curve_with_the_budget_and_the_remedy_table(
    browser: Any, fit_page: tuple[Path, dict[str, Any]]
) -> None:
    path, record = fit_page
    opened = open_report(browser, path)
    assert_clean(opened, path)
    state = assert_drawn(opened, "chart-fit-0")
    labels = [d["label"] for d in state["datasets"]]
    assert "fits" in labels and f"answer: BATCH_SIZE={record['value']}" in labels
    # the budget's line: drawn across the values tried, at the budget itself
    line = opened.page.evaluate(
        """() => Chart.getChart(document.getElementById('chart-fit-0')).data.datasets
            .filter(d => d.label.startsWith('budget:')).map(d => d.data.map(p => [p.x, p.y]))"""
    )
    values = [t["value"] for t in record["trials"]]
    assert line == [[[min(values), BUDGET_MIB * MIB], [max(values), BUDGET_MIB * MIB]]]

    # the remedy table: one row per remedy of the record, its figures as the record has them
    table = opened.page.locator("#remedies table.remedies")
    assert table.is_visible()
    headers = table.locator("thead th").all_inner_texts()
    cells = [row.locator("td").all_inner_texts() for row in table.locator("tbody tr").all()]
    rows = record["remedies"]["rows"]
    names = ["baseline", "checkpoint", "autocast", "offload", "accumulate", "dtypes"]
    assert [r["name"] for r in rows] == names
    assert [c[0] for c in cells] == [
        n if r["applied"] else f"{n} (not applied)" for n, r in zip(names, rows, strict=True)
    ]
    resident, largest = headers.index("resident peak"), headers.index("largest batch")
    for row, shown in zip(rows, cells, strict=True):
        assert shown[resident] == (format_bytes(row["rss_peak_bytes"]) if row["applied"] else "—")
        assert shown[largest] == ("—" if row["largest_batch"] is None else str(row["largest_batch"]))
    # the program has neither torch nor pandas: accumulation alone applies, the others say why
    assert [r["applied"] for r in rows] == [True, False, False, False, True, False]
    notes = opened.page.locator("#remedies li").all_inner_texts()
    assert "dtypes: the program does not use pandas" in notes
    assert "checkpoint: the program does not use torch" in notes
