"""Renderers: one method, ``render(profile) -> str``."""

from memgauge.render._base import Renderer
from memgauge.render._compare import (
    MarkdownComparisonRenderer,
    TerminalComparisonRenderer,
    comparison_headline,
)
from memgauge.render._html import HtmlRenderer
from memgauge.render._html_compare import HtmlComparisonRenderer
from memgauge.render._json import JsonRenderer
from memgauge.render._markdown import MarkdownRenderer
from memgauge.render._terminal import TerminalRenderer

__all__ = [
    "HtmlComparisonRenderer",
    "HtmlRenderer",
    "JsonRenderer",
    "MarkdownComparisonRenderer",
    "MarkdownRenderer",
    "Renderer",
    "TerminalComparisonRenderer",
    "TerminalRenderer",
    "comparison_headline",
]
