"""Renderers: one method, ``render(profile) -> str`` (a sweep's: ``render(analysis) -> str``).

Lazy: a name loads its module on first use, so the terminal report of ``memgauge run`` loads its own
renderer and sections, not the modules of the comparisons, fits, sweeps, plans and HTML pages
(~40 ms after every run)."""

from __future__ import annotations

from memgauge._lazy import attach

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.render._base import Renderer
    from memgauge.render._compare import (
        MarkdownComparisonRenderer,
        TerminalComparisonRenderer,
        comparison_headline,
    )
    from memgauge.render._fit_html import HtmlFitRenderer, JsonFitRenderer
    from memgauge.render._fit_terminal import TerminalFitRenderer, fit_trial_line
    from memgauge.render._html import HtmlRenderer
    from memgauge.render._html_compare import HtmlComparisonRenderer
    from memgauge.render._html_sweep import HtmlSweepRenderer
    from memgauge.render._json import JsonRenderer
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
        MarkdownRemediesRenderer,
        TerminalPredictionRenderer,
        TerminalRemediesRenderer,
    )
    from memgauge.render._sweep_json import JsonSweepRenderer, sweep_json
    from memgauge.render._sweep_terminal import TerminalSweepRenderer
    from memgauge.render._terminal import TerminalRenderer

_NAMES = {
    "Renderer": "_base",
    "MarkdownComparisonRenderer": "_compare",
    "TerminalComparisonRenderer": "_compare",
    "comparison_headline": "_compare",
    "HtmlFitRenderer": "_fit_html",
    "JsonFitRenderer": "_fit_html",
    "TerminalFitRenderer": "_fit_terminal",
    "fit_trial_line": "_fit_terminal",
    "HtmlRenderer": "_html",
    "HtmlComparisonRenderer": "_html_compare",
    "HtmlSweepRenderer": "_html_sweep",
    "JsonRenderer": "_json",
    "MarkdownRenderer": "_markdown",
    "HtmlPlanRenderer": "_plan",
    "JsonPlanRenderer": "_plan",
    "MarkdownPlanRenderer": "_plan",
    "TerminalPlanRenderer": "_plan",
    "HtmlRemediesRenderer": "_remedies_html",
    "JsonRemediesRenderer": "_remedies_html",
    "prediction_json": "_remedies_html",
    "remedies_json": "_remedies_html",
    "remedies_section": "_remedies_html",
    "MarkdownRemediesRenderer": "_remedies_text",
    "TerminalPredictionRenderer": "_remedies_text",
    "TerminalRemediesRenderer": "_remedies_text",
    "JsonSweepRenderer": "_sweep_json",
    "sweep_json": "_sweep_json",
    "TerminalSweepRenderer": "_sweep_terminal",
    "TerminalRenderer": "_terminal",
}
__all__ = [
    "HtmlComparisonRenderer",
    "HtmlFitRenderer",
    "HtmlPlanRenderer",
    "HtmlRemediesRenderer",
    "HtmlRenderer",
    "HtmlSweepRenderer",
    "JsonFitRenderer",
    "JsonPlanRenderer",
    "JsonRemediesRenderer",
    "JsonRenderer",
    "JsonSweepRenderer",
    "MarkdownComparisonRenderer",
    "MarkdownPlanRenderer",
    "MarkdownRemediesRenderer",
    "MarkdownRenderer",
    "Renderer",
    "TerminalComparisonRenderer",
    "TerminalFitRenderer",
    "TerminalPlanRenderer",
    "TerminalPredictionRenderer",
    "TerminalRemediesRenderer",
    "TerminalRenderer",
    "TerminalSweepRenderer",
    "comparison_headline",
    "fit_trial_line",
    "prediction_json",
    "remedies_json",
    "remedies_section",
    "sweep_json",
]
__getattr__, __dir__ = attach(__name__, _NAMES)
