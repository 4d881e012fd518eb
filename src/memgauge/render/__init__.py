"""Renderers: one method, ``render(profile) -> str`` (a sweep's: ``render(analysis) -> str``)."""

from memgauge.render._base import Renderer
from memgauge.render._compare import (
    MarkdownComparisonRenderer,
    TerminalComparisonRenderer,
    comparison_headline,
)
from memgauge.render._html import HtmlRenderer
from memgauge.render._html_compare import HtmlComparisonRenderer
from memgauge.render._html_sweep import HtmlSweepRenderer
from memgauge.render._json import JsonRenderer
from memgauge.render._markdown import MarkdownRenderer
from memgauge.render._sweep_json import JsonSweepRenderer, sweep_json
from memgauge.render._sweep_terminal import TerminalSweepRenderer
from memgauge.render._terminal import TerminalRenderer

__all__ = [
    "HtmlComparisonRenderer",
    "HtmlRenderer",
    "HtmlSweepRenderer",
    "JsonRenderer",
    "JsonSweepRenderer",
    "MarkdownComparisonRenderer",
    "MarkdownRenderer",
    "Renderer",
    "TerminalComparisonRenderer",
    "TerminalRenderer",
    "TerminalSweepRenderer",
    "comparison_headline",
    "sweep_json",
]
