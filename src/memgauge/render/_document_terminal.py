"""The report document in the terminal: each table laid out by ``Layout`` (its columns' roles
say how they give way to a narrow terminal), headings in bold, lines of figures wrapped between
their parts, paragraphs styled by tone, advice wrapped under its item, names with their values a
line each, the page's charts and cards left out."""

from __future__ import annotations

import textwrap

from rich.console import Console, Group, RenderableType
from rich.table import Column as LayoutColumn
from rich.table import Table as RichTable
from rich.text import Text

from memgauge.analysis import sparkline
from memgauge.render._document import (
    Block,
    Breaks,
    Cards,
    Change,
    Chart,
    Charts,
    Column,
    Compared,
    Finding,
    Heading,
    Items,
    Line,
    Named,
    Notes,
    Only,
    Paragraph,
    Runs,
    Section,
    Sparkline,
    Sum,
    Sums,
    Table,
    indented,
)
from memgauge.render._document_views import shown_in
from memgauge.render._format import MISSING
from memgauge.render._layout import Layout, wrapped

_STYLE = {"": "", "strong": "bold", "bad": "bold red", "warn": "yellow", "dim": "dim"}
_SPAN_STYLE = {**_STYLE, "figure": "bold magenta", "good": "green", "code": "cyan"}
# a cell's: a failure that answers as a failure, an outcome with nothing wrong plain
_CELL_STYLE = {**_SPAN_STYLE, "alarm": _STYLE["bad"], "ok": ""}
# stands for a space that must not break a line while advice is wrapped
_GLUE = "\x00"


def table_layout(table: Table, width: int) -> Layout:
    table = shown_in(table, "terminal")
    layout = Layout(width, table.title or None)
    for c in table.columns:
        add_column(layout, c)
    depths = table.depths or (0,) * len(table.rows)
    for i, (row, depth) in enumerate(zip(table.rows, depths, strict=True)):
        cells = ("  " * depth + row[0], *row[1:]) if row else row
        styles = _cell_styles(table, i)
        layout.add_row(*(Text(cell, style=style) for cell, style in zip(cells, styles, strict=True)))
    return layout


def add_column(layout: Layout, c: Column) -> LayoutColumn:
    header = Text(c.header)  # never markup: a header may be a name from the record
    if c.role == "name":
        return layout.name(header, most=c.most, least=c.least)
    if c.role == "rest":
        return layout.rest(header, least=c.least, removable=not c.keep)
    if c.role == "words":
        return layout.words(header)
    if c.role == "path":
        return layout.path(header, most=c.most or 48, least=c.least)
    if c.role == "label":
        return layout.figure(header, justify="left", least=c.width)
    return layout.figure(header, least=c.width)


def print_section(out: Console, section: Section, width: int) -> None:
    for block in section.blocks:
        if isinstance(block, Only | Runs | Breaks):
            _print_compare(out, block, width)
        elif isinstance(block, Finding):
            _finding(out, block, width)
        elif isinstance(block, Items):
            for line in block.texts:
                out.print(Text(line, style="dim"))
        elif isinstance(block, Sums | Notes):
            _print_profile(out, block, width)
        elif isinstance(block, Named):
            for name, value in block.pairs:
                out.print(Text.assemble((name, "cyan"), f": {value}"), overflow="fold")
        elif not isinstance(block, Chart | Charts | Cards):  # the page's alone
            out.print(_form(block, width))


def _form(block: Block, width: int) -> RenderableType:
    if isinstance(block, Table):
        block = shown_in(block, "terminal")
        layout = table_layout(block, width)
        fitted = layout.fit(layout.named(*block.optional), second_chance=block.second_chance)
        return _said_left_out(block, fitted)
    if isinstance(block, Heading):
        return _heading(block)
    if isinstance(block, Line):
        return wrapped(_parts(block), width, indent=block.indent)
    if isinstance(block, Sparkline):
        return _sparkline(block, width)
    if isinstance(block, Paragraph) and block.cut:
        return _cut(block, width)
    if isinstance(block, Paragraph):
        return Text(block.text, style=_STYLE[block.tone])
    if isinstance(block, Compared):
        return _compared(block, width)
    raise TypeError(f"no terminal form for {block!r}")


def _heading(heading: Heading) -> Text:
    if heading.code is None:
        return Text(heading.text, style="bold")
    title = Text(f"{heading.text} ", style="bold")
    title.append(heading.code, style="cyan")
    return title


def _parts(line: Line) -> list[Text]:
    """Each part as one text of its spans' styles; the lead goes into the first span's."""
    parts = []
    for i, spans in enumerate(line.parts):
        text = Text()
        for j, span in enumerate(spans):
            lead = line.lead if i == j == 0 else ""
            text.append(lead + span.text, style=_SPAN_STYLE[span.tone])
        parts.append(text)
    return parts


def _sparkline(block: Sparkline, width: int) -> Text:
    tail = Text(block.tail, style="dim")
    # the sparkline takes what the figures after it leave, or the whole line above them
    room = width - len(block.label) - 1 - 2 - tail.cell_len
    spark = Text(f"{block.label} ", style="bold")
    drawn = sparkline(list(block.values), width=min(60, room if room >= 10 else width - 7))
    spark.append(drawn, style="magenta")
    spark.append("  " if room >= 10 else "\n  ")
    return spark + tail


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


def _cell_styles(table: Table, row: int) -> list[str]:
    """A row's cells' styles: each cell's tone, or its column's dimming."""
    if table.tones:
        return [_CELL_STYLE[tone] for tone in table.tones[row]]
    return ["dim" if c.dim else "" for c in table.columns]


def _said_left_out(block: Table, fitted: RichTable) -> RenderableType:
    """The table, and where its ``left_out`` asks for it, which optional columns it left out."""
    shown = {str(c.header) for c in fitted.columns}
    left = [c.short for c in block.columns if c.header in block.optional and c.header not in shown]
    if not (block.left_out and left):
        return fitted
    return Group(fitted, Text(f"  {block.left_out}: {', '.join(left)}", style="dim"))


def _cut(block: Paragraph, width: int) -> Text:
    line = block.text if len(block.text) <= width else block.text[: width - 1] + "…"
    return Text(line, style=_STYLE[block.tone], no_wrap=True, overflow="ignore")


# -- the comparison's blocks ---------------------------------------------------------------------

# a change for the worse in red, for the better in green (not bold: a table full of them)
_CHANGE_STYLE = {"": "", "good": "green", "bad": "red"}


def _print_compare(out: Console, block: Only | Runs | Breaks, width: int) -> None:
    if isinstance(block, Only):
        if "terminal" in block.formats:
            print_section(out, Section("", block.blocks), width)
    elif isinstance(block, Runs):
        out.print(_runs(block, width))
    else:
        for text in block.texts:
            out.print(Text(block.lead + text, style=_STYLE[block.tone]), overflow="fold")


def _runs(block: Runs, width: int) -> RenderableType:
    layout = Layout(width, header=False, cut_figures=True)
    layout.figure("name", justify="left")
    layout.figure("exit", justify="left")
    layout.rest("command", least=10)
    for name, (ended, tone), command in zip(block.names, block.exits, block.commands, strict=True):
        layout.add_row(Text("  " + name, style="bold"), Text(ended, style=_SPAN_STYLE[tone]), Text(command))
    return layout.fit()


def _compared(block: Compared, width: int) -> RenderableType:
    """The texts' columns, then the baseline's figures and each later run's with its delta and
    ratio (or the texts last); the columns are told apart by identity, never by header: a run may
    be named "source" or "line"."""
    layout = Layout(width, block.title or None, cut_figures=True)
    if not block.figures_first:
        for c in block.columns:
            add_column(layout, c)
    ratios: list[LayoutColumn] = []
    deltas: list[LayoutColumn] = []
    for i, name in enumerate(block.runs):
        layout.figure(Text(name))  # Text: a name (a file name by default) is not rich markup
        if block.changes and i > 0:
            deltas.append(layout.figure("Δ"))
            ratios.append(layout.figure("ratio"))
    if block.figures_first:
        for c in block.columns:
            add_column(layout, c)
    depths = block.depths or (0,) * len(block.rows)
    for (texts, figures), depth in zip(block.rows, depths, strict=True):
        cells = zip(block.columns, indented(texts, depth, "  "), strict=True)
        named = [Text(t, style="dim" if c.dim else "") for c, t in cells]
        shown = [cell for i, f in enumerate(figures) for cell in _change_cells(f, block.changes and i > 0)]
        layout.add_row(*(shown + named if block.figures_first else named + shown))
    return layout.fit(ratios + deltas)


def _change_cells(f: Change, changes: bool) -> list[Text]:
    if not changes:
        return [Text(f.value)]
    style = _CHANGE_STYLE[f.tone]
    delta, ratio = (MISSING if v is None else v for v in (f.delta, f.ratio))
    return [Text(f.value), Text(delta, style=style), Text(ratio, style=style)]


# -- the profile report's blocks -----------------------------------------------------------------


def _print_profile(out: Console, block: Sums | Notes, width: int) -> None:
    if isinstance(block, Notes):
        for note in block.texts:
            out.print(Text(f"note: {note}", style="yellow"))
        return
    for one in block.sums:
        out.print(Text("\n".join(_sum_lines(one, width))), overflow="fold")
        for note in one.notes:
            out.print(Text(f"    {note}", style="dim"))


def _sum_lines(one: Sum, width: int) -> list[str]:
    """The sum on one line; too long for it, the next lines start under the '=' (a short indent
    where that is past the middle), on two lines (the figure and its first parts, then the rest)
    where they fit, else as many as it takes; a term (a number and its unit) is never split."""
    terms = ["".join(span.text for span in term) for term in one.terms]
    terms[0] = "  " + terms[0]
    indent = " " * min(len(terms[0]) + 1, 8) if len(terms[0]) + 1 > width // 2 else ""
    indent = indent or " " * (len(terms[0]) + 1)
    halves = [" ".join(terms[:3]), indent + " ".join(terms[3:])]
    if len(" ".join(terms)) <= width:
        return [" ".join(terms)]
    if max(map(len, halves)) <= width:
        return halves
    lines = [terms[0]]
    for term in terms[1:]:
        if len(lines[-1]) + 1 + len(term) <= width:
            lines[-1] += " " + term
        else:
            lines.append(indent + term)
    return lines
