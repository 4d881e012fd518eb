"""The report document in the terminal: each table laid out by ``Layout`` (its columns' roles
say how they give way to a narrow terminal), headings in bold, paragraphs styled by tone, advice
wrapped under its item, charts left out."""

from __future__ import annotations

import textwrap

from rich.console import Console
from rich.text import Text

from memgauge.render._document import Chart, Finding, Heading, Items, Paragraph, Section, Table
from memgauge.render._layout import Layout

_STYLE = {"": "", "strong": "bold", "bad": "bold red", "warn": "yellow", "dim": "dim"}
# stands for a space that must not break a line while advice is wrapped
_GLUE = "\x00"


def table_layout(table: Table, width: int) -> Layout:
    layout = Layout(width, table.title or None)
    for c in table.columns:
        if c.role == "name":
            layout.name(c.header, most=c.most, least=c.least)
        elif c.role == "rest":
            layout.rest(c.header, least=c.least, removable=not c.keep)
        elif c.role == "words":
            layout.words(c.header)
        elif c.role == "path":
            layout.path(c.header, most=c.most or 48, least=c.least)
        elif c.role == "label":
            layout.figure(c.header, justify="left", least=c.width)
        else:
            layout.figure(c.header, least=c.width)
    styles = ["dim" if c.dim else "" for c in table.columns]
    depths = table.depths or (0,) * len(table.rows)
    for row, depth in zip(table.rows, depths, strict=True):
        cells = ("  " * depth + row[0], *row[1:]) if row else row
        layout.add_row(*(Text(cell, style=style) for cell, style in zip(cells, styles, strict=True)))
    return layout


def print_section(out: Console, section: Section, width: int) -> None:
    for block in section.blocks:
        if isinstance(block, Table):
            layout = table_layout(block, width)
            out.print(layout.fit(layout.named(*block.optional)))
        elif isinstance(block, Heading):
            out.print(Text(block.text, style="bold"))
        elif isinstance(block, Paragraph):
            out.print(Text(block.text, style=_STYLE[block.tone]))
        elif isinstance(block, Items):
            for line in block.texts:
                out.print(Text(line, style="dim"))
        elif isinstance(block, Finding):
            _finding(out, block, width)
        elif not isinstance(block, Chart):  # a chart is the page's alone
            raise TypeError(f"no terminal form for {block!r}")


def _finding(out: Console, finding: Finding, width: int) -> None:
    """An item of a list: its title in bold, then its figures (dim) and its detail, each wrapped
    under it."""
    parts = [(f"- {finding.title}" + (f" at {finding.where}" if finding.where else ""), "bold")]
    if finding.figures:
        # a figure is never cut: its number and unit are held together while wrapping
        figures = (f"{label} {value.replace(' ', _GLUE)}" for label, value in finding.figures)
        parts.append((" · ".join(figures), "dim"))
    if finding.detail:
        parts.append((finding.detail, ""))
    for i, (text, style) in enumerate(parts):
        # wrapped here, not by rich: a wrapped line stays indented under its item, and no line
        # is padded with blanks to the width
        lines = textwrap.wrap(
            text,
            width,
            initial_indent="" if i == 0 else "  ",
            subsequent_indent="  ",
            break_long_words=False,
            break_on_hyphens=False,
        )
        out.print(Text("\n".join(lines).replace(_GLUE, " "), style=style), overflow="fold")
