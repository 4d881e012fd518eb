"""The torch section's part of ``memgauge compare`` (the registry's "compare_report"), built once
on the report document: tensor bytes by role at each run's peak, side by side, in the
comparison's figure table, and a bar chart on the page."""

from __future__ import annotations

from typing import Any

from memgauge.analysis import Comparison, ComparisonRow
from memgauge.render import Chart, Heading, Only, Paragraph, Section, compare_chart_data, compared_rows
from memgauge.sections.torch._analysis_compare import TorchRoles

TITLE = "torch tensors by role at each run's peak (—: no torch figures)"


def _rows(part: TorchRoles) -> list[tuple[str, ComparisonRow]]:
    return [(row.label, row) for row in part.rows]


def section(c: Comparison, part: TorchRoles) -> Section:
    heading = Heading("Torch tensors by role at each run's peak", level=3)
    return Section(
        "torch tensors by role at each run's peak",
        (
            Only(("markdown",), (heading, Paragraph("— : no torch figures in that run."))),
            Chart("chart-compare-torch"),
            compared_rows(c, TITLE, "role", _rows(part)),
        ),
        "Tensor bytes counted by storage, at the moment of each run's largest tensor total. "
        "— : no torch figures in that run.",
    )


def page_data(part: TorchRoles) -> dict[str, Any]:
    return {"torchRoles": compare_chart_data(_rows(part))}
