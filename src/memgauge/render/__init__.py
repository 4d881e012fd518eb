"""Renderers: one method, ``render(profile) -> str`` (a sweep's: ``render(analysis) -> str``)."""

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
