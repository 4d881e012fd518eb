"""The plan's HTML report in real headless Chromium: it renders offline, without errors, and
shows the same answer as the terminal report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memgauge.analysis import PlanInput, build_plan
from memgauge.model import PlanMember, PlanRun
from memgauge.render import HtmlPlanRenderer, TerminalPlanRenderer
from tests.conftest import MIB
from tests.integration.test_html_browser import assert_clean, open_report


def spike(name: str, at: float) -> PlanInput:
    member = PlanMember(name, f"{name}.json", ["python", f"{name}.py"], 130 * MIB, 0, at, 4.5)
    return PlanInput(member, (0.0, at, at + 0.5), (30 * MIB, 130 * MIB, 30 * MIB))


def test_the_plan_page_renders_clean(tmp_path: Path, browser: Any) -> None:
    record = build_plan(
        [spike("a", 0.5), spike("b", 2.0)], machine_bytes=200 * MIB, machine_cores=2, trials=500
    )
    record.runs.append(
        PlanRun("given", 2, [0.0, 0.0], 200 * MIB, True, 0, 0, 150 * MIB, 4.6, 1.01, [0, 0], 160 * MIB)
    )
    path = tmp_path / "plan.html"
    path.write_text(HtmlPlanRenderer().render(record))
    opened = open_report(browser, path)
    assert_clean(opened, path)
    page = opened.page
    assert page.inner_text("h1") == TerminalPlanRenderer().render(record).splitlines()[0]
    assert "survived" in page.inner_text("#runs")
    assert page.locator("#members tbody tr").count() == 2
