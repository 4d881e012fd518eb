"""The charts of a page in a grid, each under its title, from the charts' data (each with its
``id``, ``title`` and ``kind``): the fit page's (``_fit_html``). The sweep's page has its charts in
its sections, as the report document's ``Charts`` (``_sweep_charts``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memgauge.render._document import Section
from memgauge.render._document_html import section_part
from memgauge.render._sweep_charts import chart_grid


def canvases(charts: Sequence[dict[str, Any]]) -> str:
    """The charts' boxes, in a grid, each under its title."""
    return section_part(Section("", (chart_grid(charts),))).content
