"""The report document in Markdown: a heading and a table's title in bold (the report's title a
Markdown heading), a line of figures on one line, paragraphs (a strong one in bold), notes as a
list, advice as a loose list (each item its paragraphs), charts left out. Blocks are lists of
lines, joined by blank lines (a table straight under a paragraph's line would take it as its
header)."""

from __future__ import annotations

from memgauge.analysis import sparkline
from memgauge.render._document import (
    Block,
    Chart,
    Column,
    Finding,
    Heading,
    Items,
    Line,
    Paragraph,
    Section,
    Sparkline,
    Table,
)
from memgauge.render._format import clip, md_code, md_table, md_text

_BOLD = ("strong", "figure", "bad")  # a failure is bold red in the terminal: bold is what Markdown has


def section_blocks(section: Section) -> list[list[str]]:
    blocks: list[list[str]] = []
    items = False  # whether the last block is a list of lines' items
    for block in section.blocks:
        if isinstance(block, Table):
            blocks += _table(block)
        elif isinstance(block, Line) and block.joined and blocks:
            blocks[-1][-1] += " · " + _line(block)
        elif isinstance(block, Line) and block.item:
            if not items:
                blocks.append([])
            blocks[-1].append(f"- {_line(block)}")
        elif not isinstance(block, Chart):  # a chart is the page's alone
            blocks.append(_form(block))
        items = isinstance(block, Line) and block.item
    return blocks


def _form(block: Block) -> list[str]:
    if isinstance(block, Heading):
        return [_heading(block)]
    if isinstance(block, Line):
        return [_line(block)]
    if isinstance(block, Sparkline):
        return [
            f"{md_text(block.label)} {md_code(sparkline(list(block.values), width=60))} {md_text(block.tail)}"
        ]
    if isinstance(block, Paragraph):
        words = md_text(block.text)
        return [f"**{words}**" if block.tone == "strong" else words]
    if isinstance(block, Items):
        return [f"- {md_text(line)}" for line in block.texts]
    if isinstance(block, Finding):
        return _finding(block)
    raise TypeError(f"no Markdown form for {block!r}")


def _heading(heading: Heading) -> str:
    code = "" if heading.code is None else f" {md_code(heading.code)}"
    if heading.level:
        return f"{'#' * heading.level} {md_text(heading.text)}{code}"
    return f"**{md_text(heading.text)}**{code}"


def _line(line: Line) -> str:
    """The parts joined by spaces; bold where the terminal is bold (a failure: its bold red), the
    spans of one weight together, across parts too ("**container needs 1.2 GiB**", a sentence in
    bold one run, not a run a word), code as code."""
    runs: list[tuple[str, str]] = []  # (how it is marked, its text)
    for i, spans in enumerate(line.parts):
        for j, span in enumerate(spans):
            mark = "**" if span.tone in _BOLD else "`" if span.tone == "code" else ""
            space = " " if i and not j else ""  # between two parts
            if runs and runs[-1][0] == mark:
                runs[-1] = (mark, runs[-1][1] + space + span.text)
            else:
                if space:
                    runs.append(("", space))
                runs.append((mark, span.text))
    return "".join(md_code(t) if m == "`" else f"{m}{md_text(t)}{m}" for m, t in runs)


def _cell(column: Column, text: str) -> str:
    if column.clip is not None:
        text = clip(text.strip(), column.clip)
    return md_code(text) if column.code and text != column.absent else md_text(text)


def _table(table: Table) -> list[list[str]]:
    blocks = [[f"**{md_text(table.title)}**"]] if table.title else []
    aligns = ["---:" if c.role == "figure" else ":---" for c in table.columns]
    rows = [[_cell(c, cell) for c, cell in zip(table.columns, row, strict=True)] for row in table.rows]
    for row, depth in zip(rows, table.depths, strict=False):
        if depth > 0:  # Markdown drops leading spaces: non-breaking ones, then an arrow
            row[0] = "&nbsp;" * 4 * (depth - 1) + "↳ " + row[0]
    blocks.append(md_table([c.header for c in table.columns], aligns, rows))
    return blocks


def _finding(finding: Finding) -> list[str]:
    """An item of a loose list (a blank line between its paragraphs, and so between items, whose
    blocks are joined by one): its title in bold, its figures, its detail."""
    lines = [f"- **{md_text(finding.title)}**" + (f" at {md_code(finding.where)}" if finding.where else "")]
    if finding.figures:
        lines += ["", "  " + " · ".join(f"{md_text(k)} {md_text(v)}" for k, v in finding.figures)]
    if finding.detail:
        lines += ["", f"  {md_text(finding.detail)}"]
    return lines
