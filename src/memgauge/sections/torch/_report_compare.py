"""The torch section's part of ``memgauge compare`` in each format (the registry's
"compare_report"): tensor bytes by role at each run's peak, side by side, in the comparison's
figure tables, and a bar chart on the page."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from memgauge.analysis import Comparison
from memgauge.render import (
    Part,
    compare_chart_data,
    compare_rows_html,
    compare_rows_markdown,
    compare_rows_terminal,
)
from memgauge.sections.torch._analysis_compare import TorchRoles

TITLE = "torch tensors by role at each run's peak (—: no torch figures)"


def _rows(part: TorchRoles) -> list[tuple[str, Any]]:
    return [(row.label, row) for row in part.rows]


def terminal(out: Console, c: Comparison, part: TorchRoles, width: int) -> None:
    compare_rows_terminal(out, c, TITLE, "role", _rows(part), width)


def markdown(c: Comparison, part: TorchRoles) -> list[str]:
    head = ["", "### Torch tensors by role at each run's peak", "", "— : no torch figures in that run.", ""]
    return head + compare_rows_markdown(c, ["role"], [([label], row) for label, row in _rows(part)])


def html(c: Comparison, part: TorchRoles) -> Part:
    return Part(
        '<div class="chart"><canvas id="chart-compare-torch"></canvas></div>'
        + compare_rows_html(c, "role", _rows(part)),
        "torch tensors by role at each run's peak",
        "Tensor bytes counted by storage, at the moment of each run's largest tensor total. "
        "— : no torch figures in that run.",
    )


def page_data(part: TorchRoles) -> dict[str, Any]:
    return {"torchRoles": compare_chart_data(_rows(part))}
