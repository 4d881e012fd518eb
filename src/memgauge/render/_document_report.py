"""A whole report on the report document (``_document``): its title and its sections, each with the
page's anchor for it, rendered by the backends every format has (``_document_terminal``,
``_document_markdown``, ``_document_html``). The reports of ``memgauge fit``, ``memgauge plan``,
``memgauge check`` (its verdict) and of a fit's remedies and prediction are built once as a
``Report``; each format only places it (a blank line between the terminal's sections, the page's
frame around its sections)."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass

from memgauge.render._document import Heading, Line, Section, Span, SpanTone
from memgauge.render._document_html import section_part
from memgauge.render._document_markdown import section_blocks
from memgauge.render._document_terminal import print_section
from memgauge.render._html_page import Sections
from memgauge.render._layout import console, without_trailing_blanks

# where a sentence may break on a narrow terminal: between words, never after a number or an
# operator, nor before one, so that a figure keeps its unit ("200 MiB", "1 min 0 s") and a
# comparison its sides ("rss <= 2.0 GiB")
_BREAK = re.compile(r"(?<![\d.=<>+]) (?![\d=<>])")


def words(text: str, tone: SpanTone = "") -> list[tuple[Span, ...]]:
    """``text`` as a line's parts: the terminal breaks it only between them (``_BREAK``)."""
    return [(Span(word, tone),) for word in _BREAK.split(text)]


def sentence(text: str, tone: SpanTone = "", *, lead: str = "", item: bool = False) -> Line:
    """A sentence as a line broken between its words (``words``), the next lines indented two
    more than ``lead``; ``item``: one of a list in Markdown."""
    return Line(tuple(words(text, tone)), lead=lead, indent=" " * len(lead) + "  ", item=item)


@dataclass(frozen=True)
class Report:
    """``title``: the text reports' first line (a page shows it in its own frame, its ``<h1>``, or
    not at all where its frame names the report otherwise); ``sections``: (the page's anchor, the
    section) in order; a section's heading and note are the page's alone."""

    title: Heading | None
    sections: tuple[tuple[str, Section], ...]

    def blocks(self) -> list[Section]:
        """The sections the text reports render, the title first."""
        head = [] if self.title is None else [Section("", (self.title,))]
        return head + [section for _, section in self.sections]


def terminal_text(report: Report, width: int = 100, color: bool = False, *, gap: bool = True) -> str:
    """The report as the terminal shows it: a blank line between its sections where ``gap``, no
    blanks at the ends of lines (rich pads a table's rows to its width)."""
    buf = io.StringIO()
    out = console(buf, width, color)
    # the title stays on the line over the first section
    for i, section in enumerate(report.blocks()):
        if gap and i > (0 if report.title is None else 1):
            out.print()
        print_section(out, section, width)
    return without_trailing_blanks(buf.getvalue())


def markdown_text(report: Report) -> str:
    blocks = [block for section in report.blocks() for block in section_blocks(section)]
    return "\n\n".join("\n".join(b) for b in blocks if b) + "\n"


def page_sections(sections: Sequence[tuple[str, Section]]) -> str:
    """The sections as the page's, each under its anchor, heading and note (``Sections``)."""
    registry: Sections[None] = Sections()
    registry.register_group(lambda _: [(id, None, section_part(section)) for id, section in sections])
    return registry.build(None)[1]
