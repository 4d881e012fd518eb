"""The report document in the terminal: each table laid out by ``Layout`` (its columns' roles
say how they give way to a narrow terminal), paragraphs styled by tone, charts left out."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from memgauge.render._document import Chart, Items, Paragraph, Section, Table
from memgauge.render._layout import Layout

_STYLE = {"": "", "strong": "bold", "bad": "bold red", "warn": "yellow", "dim": "dim"}


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
            layout.figure(c.header, justify="left")
        else:
            layout.figure(c.header)
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
        elif isinstance(block, Paragraph):
            out.print(Text(block.text, style=_STYLE[block.tone]))
        elif isinstance(block, Items):
            for line in block.texts:
                out.print(Text(line, style="dim"))
        elif not isinstance(block, Chart):  # a chart is the page's alone
            raise TypeError(f"no terminal form for {block!r}")
