"""The torch section's part of ``memgauge compare`` (its "compare" and "compare_report" parts): the
tensor bytes by role of two runs side by side in every format, and nothing where no run has torch
figures. Profiles made here: no torch needed."""

from __future__ import annotations

import json

from memgauge.analysis import compare
from memgauge.render import HtmlComparisonRenderer, MarkdownComparisonRenderer, TerminalComparisonRenderer
from memgauge.sections.torch import TorchMemory, TorchStep
from tests.factories import MIB, make_profile


def _torch(params: int) -> TorchMemory:
    roles = {"parameters": params, "gradients": params, "activations": 3 * MIB}
    return TorchMemory(mode="summary", pid=1, peak_bytes=sum(roles.values()), peak_by_role=roles)


def test_two_runs_roles_are_side_by_side_in_every_format_and_absent_without_torch() -> None:
    small, large = make_profile(torch=_torch(10 * MIB)), make_profile(torch=_torch(40 * MIB))
    c = compare([small, large], ["small", "large"])
    rows = {r["label"]: r["values"] for r in json.loads(json.dumps(c.to_dict()))["torch"]}
    assert rows["parameters"] == [10 * MIB, 40 * MIB] and rows["total"] == [23 * MIB, 83 * MIB]
    terminal = TerminalComparisonRenderer(width=140).render(c)
    assert "torch tensors by role at each run's peak" in terminal and "40.0 MiB" in terminal
    md = MarkdownComparisonRenderer().render(c)
    assert "### Torch tensors by role at each run's peak" in md
    assert "| parameters | 10.0 MiB | 40.0 MiB | +30.0 MiB | 4.00x |" in md
    page = HtmlComparisonRenderer().render(c)
    assert '<section id="torch">' in page and "chart-compare-torch" in page and '"torchRoles"' in page
    # one run without torch: its figures are missing; none with it: no part anywhere
    half = compare([small, make_profile()], ["small", "plain"])
    assert [r.values[1] for r in half.section("torch").rows] == [None] * 7
    plain = compare([make_profile(), make_profile()], ["a", "b"])
    assert plain.section("torch") is None and "torch" not in plain.to_dict()
    assert "torch" not in TerminalComparisonRenderer(width=140).render(plain)
    assert '<section id="torch">' not in HtmlComparisonRenderer().render(plain)


def test_the_report_pages_data_has_a_sections_charts_only_where_it_has_figures() -> None:
    import re

    from memgauge.render import HtmlRenderer

    def page_data(profile: object) -> dict[str, object]:
        html = HtmlRenderer().render(profile)  # type: ignore[arg-type]
        found = re.search(r'<script type="application/json" id="memgauge-data">(.*?)</script>', html, re.S)
        assert found is not None
        loaded: dict[str, object] = json.loads(found.group(1))
        return loaded

    stepped = _torch(10 * MIB)
    stepped.steps = [TorchStep(0, 0.0, 0.1, stepped.peak_bytes, peak_by_role=stepped.peak_by_role)]
    torch = page_data(make_profile(torch=stepped))["torch"]
    assert isinstance(torch, dict) and torch["labels"] == ["1"]
    assert "torch" not in page_data(make_profile()) and "training" not in page_data(make_profile())
