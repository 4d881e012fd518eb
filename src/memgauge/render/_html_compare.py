"""The HTML page of ``memgauge compare``: the same self-contained frame as the report, its sections
the comparison's document (``_compare_document``) after a header of its own; the page has no nav
(it is short: a summary, the phases, the sections' parts, the lines and the notes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memgauge.analysis import Comparison, ComparisonRow, has_values
from memgauge.render._compare_document import comparison_sections
from memgauge.render._document_html import section_part
from memgauge.render._format import esc
from memgauge.render._html_page import Part, Sections, page
from memgauge.sections import section


def compare_chart_data(rows: Sequence[tuple[str, ComparisonRow]]) -> dict[str, Any]:
    """Figure rows as the page script's bar groups; a figure no profile has (no --alloc) gets no
    group."""
    kept = [(label, r) for label, r in rows if has_values(r)]
    return {"labels": [label for label, _ in kept], "values": [list(r.values) for _, r in kept]}


def _sections(c: Comparison) -> list[tuple[str, str | None, Part]]:
    return [(id, None, section_part(s)) for id, s in comparison_sections(c)]


SECTIONS: Sections[Comparison] = Sections()
SECTIONS.register_group(_sections)


def _data(c: Comparison) -> dict[str, Any]:
    by_unit = {u: [(r.label, r) for r in c.summary if r.unit == u] for u in ("bytes", "seconds")}
    data: dict[str, Any] = {
        "kind": "comparison",
        "names": list(c.names),
        "peaks": compare_chart_data(by_unit["bytes"]),
        "times": compare_chart_data(by_unit["seconds"]),
    }
    if c.phases:
        data["phasePeaks"] = compare_chart_data([(ph.name, ph.peak) for ph in c.phases])
        data["phaseTimes"] = compare_chart_data([(ph.name, ph.duration) for ph in c.phases])
    for name, part in c.sections.items():
        data.update(getattr(section(name).part("compare_report"), "page_data", lambda _: {})(part))
    return data


class HtmlComparisonRenderer:
    def render(self, comparison: Comparison) -> str:
        c = comparison
        _, sections = SECTIONS.build(c)
        body = f"<header><h1>memgauge compare <code>{esc(' vs '.join(c.names))}</code></h1></header>\n"
        body += f"<main>{sections}</main>"
        return page(f"memgauge compare: {' vs '.join(c.names)}", body, _data(c))
