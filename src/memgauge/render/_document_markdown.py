"""The report document in Markdown: a heading and a table's title in bold, paragraphs (a strong
one in bold), notes as a list, advice as a loose list (each item its paragraphs), charts left out.
Blocks are lists of lines, joined by blank lines (a table straight under a paragraph's line would
take it as its header)."""

from __future__ import annotations

from memgauge.render._document import Chart, Column, Finding, Heading, Items, Paragraph, Section, Table
from memgauge.render._format import clip, md_code, md_table, md_text


def section_blocks(section: Section) -> list[list[str]]:
    blocks: list[list[str]] = []
    for block in section.blocks:
        if isinstance(block, Table):
            blocks += _table(block)
        elif isinstance(block, Heading):
            blocks.append([f"**{md_text(block.text)}**"])
        elif isinstance(block, Paragraph):
            words = md_text(block.text)
            blocks.append([f"**{words}**" if block.tone == "strong" else words])
        elif isinstance(block, Items):
            blocks.append([f"- {md_text(line)}" for line in block.texts])
        elif isinstance(block, Finding):
            blocks.append(_finding(block))
        elif not isinstance(block, Chart):  # a chart is the page's alone
            raise TypeError(f"no Markdown form for {block!r}")
    return blocks


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
