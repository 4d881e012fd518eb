"""The report document in Markdown: a heading and a table's title in bold (the report's title a
Markdown heading), a line of figures on one line, paragraphs (a strong one in bold), notes as a
list, advice as a loose list (each item its paragraphs), names with their values as a list, the
page's charts and cards left out. Blocks are lists of lines, joined by blank lines (a table
straight under a paragraph's line would take it as its header)."""

from __future__ import annotations

from memgauge.analysis import sparkline
from memgauge.render._document import (
    Block,
    Breaks,
    Cards,
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
    Sums,
    Table,
    indented,
)
from memgauge.render._document_views import shown_in
from memgauge.render._format import MISSING, clip, md_code, md_row, md_table, md_text

# a failure is bold red in the terminal: bold is what Markdown has
_BOLD = ("strong", "figure", "bad", "alarm")


def section_blocks(section: Section) -> list[list[str]]:
    blocks: list[list[str]] = []
    items = False  # whether the last block is a list of lines' items
    for block in section.blocks:
        if isinstance(block, Only):
            blocks += section_blocks(Section("", block.blocks)) if "markdown" in block.formats else []
        elif isinstance(block, Table):
            blocks += _table(block)
        elif isinstance(block, Line) and block.joined and blocks:
            blocks[-1][-1] += " · " + _line(block)
        elif isinstance(block, Line) and block.item:
            if not items:
                blocks.append([])
            blocks[-1].append(f"- {_line(block)}")
        elif not isinstance(block, Chart | Charts | Cards):  # the page's alone
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
    if isinstance(block, Named):
        return [f"- {md_code(name)}: {md_text(value)}" for name, value in block.pairs]
    if isinstance(block, Finding):
        return _finding(block)
    if isinstance(block, Compared | Runs | Breaks):
        return _compare_form(block)
    if isinstance(block, Sums | Notes):
        return _profile_form(block)
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
    table = shown_in(table, "markdown")
    blocks = [[f"**{md_text(table.title)}**"]] if table.title else []
    aligns = ["---:" if c.role == "figure" else ":---" for c in table.columns]
    rows = [[_cell(c, cell) for c, cell in zip(table.columns, row, strict=True)] for row in table.rows]
    for row, tones in zip(rows, table.tones, strict=False):
        row[:] = [_toned(cell, tone) for cell, tone in zip(row, tones, strict=True)]
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


def _toned(cell: str, tone: str) -> str:
    """A cell bold where the terminal's is (an empty one stays empty: ``****`` is no bold)."""
    return f"**{cell}**" if tone in _BOLD and cell else cell


# -- the comparison's blocks ---------------------------------------------------------------------


def _compare_form(block: Compared | Runs | Breaks) -> list[str]:
    if isinstance(block, Compared):
        return _compared(block)
    if isinstance(block, Runs):
        rows = [md_row(["profile", "exit", "command"]), md_row(["---"] * 3)]
        for i, (name, (ended, _), command) in enumerate(
            zip(block.names, block.exits, block.commands, strict=True)
        ):
            label = md_text(name) + (" (baseline)" if i == 0 else "")
            rows.append(md_row([label, md_text(ended), md_code(command)]))
        return rows
    # one paragraph: a hard line break ("  ") after each line but the last
    quote = "> " if block.quote else ""
    return [f"{quote}{md_text(block.lead + t)}  " for t in block.texts[:-1]] + [
        f"{quote}{md_text(block.lead + t)}".rstrip() for t in block.texts[-1:]
    ]


def _compared(block: Compared) -> list[str]:
    """The texts, then the baseline's figure and each later run's with its delta and ratio."""
    heads = [md_text(c.header) for c in block.columns] + [md_text(block.runs[0])]
    for name in block.runs[1:]:
        heads += (
            [md_text(name), f"Δ {md_text(name)}", f"ratio {md_text(name)}"]
            if block.changes
            else [md_text(name)]
        )
    lines = [
        md_row(heads),
        md_row(["---"] * len(block.columns) + ["---:"] * (len(heads) - len(block.columns))),
    ]
    depths = block.depths or (0,) * len(block.rows)
    for (texts, figures), depth in zip(block.rows, depths, strict=True):
        # the indentation of a nested row, kept visible in a table cell
        cells = [
            _cell(c, t) for c, t in zip(block.columns, indented(texts, depth, "\u00a0\u00a0"), strict=True)
        ]
        for i, f in enumerate(figures):
            changes = (f.delta, f.ratio) if block.changes and i > 0 else ()
            cells += [f.value, *(MISSING if v is None else v for v in changes)]
        lines.append(md_row(cells))
    return lines


# -- the profile report's blocks -----------------------------------------------------------------


def _profile_form(block: Sums | Notes) -> list[str]:
    if isinstance(block, Notes):
        # a paragraph each, in one quote
        return "\n>\n".join(f"> note: {md_text(note)}" for note in block.texts).split("\n")
    lines: list[str] = []
    for one in block.sums:
        # the terms as they are: figures and signs, nothing Markdown would take for its own
        lines.append("- " + " ".join("".join(span.text for span in term) for term in one.terms))
        lines += [f"  - {md_text(note)}" for note in one.notes]
    return lines
