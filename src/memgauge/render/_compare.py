"""The text reports of a ``Comparison`` (``memgauge compare``): its document
(``_compare_document``) in the terminal and in Markdown."""

from __future__ import annotations

import io

from memgauge.analysis import Comparison
from memgauge.render._compare_document import comparison_document
from memgauge.render._document_markdown import section_blocks
from memgauge.render._document_terminal import print_section
from memgauge.render._layout import console, without_trailing_blanks


class TerminalComparisonRenderer:
    def __init__(self, width: int = 100, color: bool = False) -> None:
        self.width = width
        self.color = color

    def render(self, comparison: Comparison) -> str:
        buf = io.StringIO()
        out = console(buf, self.width, self.color)
        for section in comparison_document(comparison):
            print_section(out, section, self.width)
        return without_trailing_blanks(buf.getvalue())


class MarkdownComparisonRenderer:
    def render(self, comparison: Comparison) -> str:
        blocks = [block for section in comparison_document(comparison) for block in section_blocks(section)]
        return "\n\n".join("\n".join(b) for b in blocks if b) + "\n"
