"""The HTML page of ``memgauge sweep``: the same self-contained, offline frame as the run report,
its sections the sweep's report document (``_sweep_document``) as the page shows it: the tables
sortable, the charts drawn by the page script from the data each ``Chart`` carries. Charts and
rows are capped so that a large sweep still makes a page that opens at once.

The page keeps only its frame (the header with its nav, the footer) and the order of its sections,
registered in ``SECTIONS`` with their anchors and the text of their links in the nav: the fits
first, then the points they were fitted to. A new section is built in the document, where every
format has it, and registered here at its place on the page.
"""

from __future__ import annotations

import html
import shlex
from collections.abc import Callable, Mapping
from dataclasses import replace

from memgauge.analysis import SweepAnalysis
from memgauge.model import SWEEP
from memgauge.render._document import Section
from memgauge.render._document_html import section_part
from memgauge.render._document_views import chart_blocks
from memgauge.render._format import esc
from memgauge.render._html_page import Part, Sections, page
from memgauge.render._sweep_charts import MAX_CHARTS
from memgauge.render._sweep_document import sweep_document
from memgauge.render._sweep_json import finite

_MAX_ROWS = 50

# the document's sections by their anchors
SweepView = Mapping[str, Section]


def _part(section: Section) -> Part:
    part = section_part(section)
    # a note is an element's text: its quotes kept as written (an apostrophe needs no escape)
    return replace(part, note=html.escape(section.note, quote=False))


def _section(id: str) -> Callable[[SweepView], Part | None]:
    """The document's section of this anchor on the page, where the sweep has one."""

    def build(v: SweepView) -> Part | None:
        return _part(v[id]) if id in v else None

    return build


# the page's order: what the sweep found, then what it was found in (the text reports have the
# points first); each section's anchor and its link in the nav
_ORDER = (
    ("summary", None),
    ("growth", "growth"),
    ("predictions", "predictions"),
    ("budget", "budget"),
    ("points", "points"),
    ("phases", "phases"),
    ("shares", "phase shares"),
    ("scaling", "scaling"),
    ("notes", "notes"),
)
SECTIONS: Sections[SweepView] = Sections()
for _id, _nav in _ORDER:
    SECTIONS.register(_id, _nav, _section(_id))


class HtmlSweepRenderer:
    def __init__(self, max_rows: int = _MAX_ROWS, max_charts: int = MAX_CHARTS) -> None:
        self.max_rows = max_rows
        self.max_charts = max_charts

    def render(self, analysis: SweepAnalysis) -> str:
        r = analysis.result
        document = sweep_document(analysis, self.max_rows, self.max_charts)
        nav, sections = SECTIONS.build(document)
        # the charts' data in the order the page shows them, as the page script numbers them
        shown = [document[id] for id in SECTIONS.ids if id in document]
        drawn = [chart.data for s in shown for chart in chart_blocks(s) if chart.data is not None]
        command = shlex.join(r.command)
        footer = f"memgauge {esc(r.memgauge_version)} · sweep record version {SWEEP.version}"
        if r.started_at:
            footer += f" · started {esc(r.started_at)}"
        body = (
            f"<header><h1>memgauge sweep <code>{esc(command)}</code></h1><nav>{nav}</nav></header>\n"
            f"<main>{sections}</main>\n<footer>{footer}</footer>"
        )
        return page(f"memgauge sweep: {command}", body, finite({"kind": "sweep", "charts": drawn}))
