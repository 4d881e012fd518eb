"""Renderers: one method, ``render(profile) -> str`` (a sweep's: ``render(analysis) -> str``).

Lazy: importing this face loads no renderer until its name is used (a section's report blocks
import the document's vocabulary from here while the renderers import the sections' registry)."""

from __future__ import annotations

from memgauge._lazy import attach

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.render._base import Renderer
    from memgauge.render._compare import MarkdownComparisonRenderer, TerminalComparisonRenderer
    from memgauge.render._compare_document import compared_rows, comparison_headline
    from memgauge.render._document import (
        Block,
        Breaks,
        Change,
        Chart,
        Column,
        Compared,
        Heading,
        Items,
        Only,
        Paragraph,
        Section,
        Table,
    )
    from memgauge.render._fit_html import HtmlFitRenderer, JsonFitRenderer
    from memgauge.render._fit_text import MarkdownFitRenderer, TerminalFitRenderer, fit_trial_line
    from memgauge.render._format import MISSING, format_number, md_row, md_text, percent
    from memgauge.render._html import HtmlRenderer
    from memgauge.render._html_compare import HtmlComparisonRenderer, compare_chart_data
    from memgauge.render._html_page import Part, items, text
    from memgauge.render._html_sweep import HtmlSweepRenderer
    from memgauge.render._json import JsonRenderer
    from memgauge.render._layout import Layout
    from memgauge.render._markdown import MarkdownRenderer
    from memgauge.render._plan import (
        HtmlPlanRenderer,
        JsonPlanRenderer,
        MarkdownPlanRenderer,
        TerminalPlanRenderer,
    )
    from memgauge.render._remedies_html import (
        HtmlRemediesRenderer,
        JsonRemediesRenderer,
        prediction_json,
        remedies_json,
        remedies_section,
    )
    from memgauge.render._remedies_text import (
        MarkdownPredictionRenderer,
        MarkdownRemediesRenderer,
        TerminalPredictionRenderer,
        TerminalRemediesRenderer,
    )
    from memgauge.render._sweep_json import JsonSweepRenderer, sweep_json
    from memgauge.render._sweep_markdown import MarkdownSweepRenderer
    from memgauge.render._sweep_terminal import TerminalSweepRenderer
    from memgauge.render._terminal import TerminalRenderer
    from memgauge.render._verdict import MarkdownVerdictRenderer, TerminalVerdictRenderer

_NAMES = {
    "Block": "_document",
    "Breaks": "_document",
    "Change": "_document",
    "Chart": "_document",
    "Column": "_document",
    "Compared": "_document",
    "comparison_headline": "_compare_document",
    "compared_rows": "_compare_document",
    "Heading": "_document",
    "Only": "_document",
    "fit_trial_line": "_fit_text",
    "format_number": "_format",
    "HtmlComparisonRenderer": "_html_compare",
    "compare_chart_data": "_html_compare",
    "HtmlFitRenderer": "_fit_html",
    "HtmlPlanRenderer": "_plan",
    "HtmlRemediesRenderer": "_remedies_html",
    "HtmlRenderer": "_html",
    "HtmlSweepRenderer": "_html_sweep",
    "Items": "_document",
    "items": "_html_page",
    "JsonFitRenderer": "_fit_html",
    "JsonPlanRenderer": "_plan",
    "JsonRemediesRenderer": "_remedies_html",
    "JsonRenderer": "_json",
    "JsonSweepRenderer": "_sweep_json",
    "Layout": "_layout",
    "MarkdownComparisonRenderer": "_compare",
    "MarkdownFitRenderer": "_fit_text",
    "MarkdownPlanRenderer": "_plan",
    "MarkdownPredictionRenderer": "_remedies_text",
    "MarkdownRemediesRenderer": "_remedies_text",
    "MarkdownRenderer": "_markdown",
    "MarkdownSweepRenderer": "_sweep_markdown",
    "MarkdownVerdictRenderer": "_verdict",
    "md_row": "_format",
    "md_text": "_format",
    "MISSING": "_format",
    "Paragraph": "_document",
    "Part": "_html_page",
    "percent": "_format",
    "prediction_json": "_remedies_html",
    "remedies_json": "_remedies_html",
    "remedies_section": "_remedies_html",
    "Renderer": "_base",
    "Section": "_document",
    "sweep_json": "_sweep_json",
    "Table": "_document",
    "TerminalComparisonRenderer": "_compare",
    "TerminalFitRenderer": "_fit_text",
    "TerminalPlanRenderer": "_plan",
    "TerminalPredictionRenderer": "_remedies_text",
    "TerminalRemediesRenderer": "_remedies_text",
    "TerminalRenderer": "_terminal",
    "TerminalSweepRenderer": "_sweep_terminal",
    "TerminalVerdictRenderer": "_verdict",
    "text": "_html_page",
}

__all__ = [
    "MISSING",
    "Block",
    "Breaks",
    "Change",
    "Chart",
    "Column",
    "Compared",
    "Heading",
    "HtmlComparisonRenderer",
    "HtmlFitRenderer",
    "HtmlPlanRenderer",
    "HtmlRemediesRenderer",
    "HtmlRenderer",
    "HtmlSweepRenderer",
    "Items",
    "JsonFitRenderer",
    "JsonPlanRenderer",
    "JsonRemediesRenderer",
    "JsonRenderer",
    "JsonSweepRenderer",
    "Layout",
    "MarkdownComparisonRenderer",
    "MarkdownFitRenderer",
    "MarkdownPlanRenderer",
    "MarkdownPredictionRenderer",
    "MarkdownRemediesRenderer",
    "MarkdownRenderer",
    "MarkdownSweepRenderer",
    "MarkdownVerdictRenderer",
    "Only",
    "Paragraph",
    "Part",
    "Renderer",
    "Section",
    "Table",
    "TerminalComparisonRenderer",
    "TerminalFitRenderer",
    "TerminalPlanRenderer",
    "TerminalPredictionRenderer",
    "TerminalRemediesRenderer",
    "TerminalRenderer",
    "TerminalSweepRenderer",
    "TerminalVerdictRenderer",
    "compare_chart_data",
    "compared_rows",
    "comparison_headline",
    "fit_trial_line",
    "format_number",
    "items",
    "md_row",
    "md_text",
    "percent",
    "prediction_json",
    "remedies_json",
    "remedies_section",
    "sweep_json",
    "text",
]

__getattr__, __dir__ = attach(__name__, _NAMES)
