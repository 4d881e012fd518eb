"""The report document in Markdown: a table under its title in bold, paragraphs (a strong one in
bold), notes as a list, charts left out. Blocks are lists of lines, joined by blank lines (a
table straight under a paragraph's line would take it as its header)."""

from __future__ import annotations

from memgauge.render._document import Chart, Column, Items, Paragraph, Section, Table
from memgauge.render._format import clip, md_code, md_table, md_text


def section_blocks(section: Section) -> list[list[str]]:
    blocks: list[list[str]] = []
    for block in section.blocks:
        if isinstance(block, Table):
            blocks += _table(block)
        elif isinstance(block, Paragraph):
            words = md_text(block.text)
            blocks.append([f"**{words}**" if block.tone == "strong" else words])
        elif isinstance(block, Items):
            blocks.append([f"- {md_text(line)}" for line in block.texts])
        elif not isinstance(block, Chart):  # a chart is the page's alone
            raise TypeError(f"no Markdown form for {block!r}")
    return blocks


def _cell(column: Column, text: str) -> str:
    if column.clip is not None:
        text = clip(text.strip(), column.clip)
    return md_code(text) if column.code else md_text(text)


def _table(table: Table) -> list[list[str]]:
    blocks = [[f"**{md_text(table.title)}**"]] if table.title else []
    aligns = ["---:" if c.role == "figure" else ":---" for c in table.columns]
    rows = [[_cell(c, cell) for c, cell in zip(table.columns, row, strict=True)] for row in table.rows]
    for row, depth in zip(rows, table.depths, strict=False):
        if depth > 0:  # Markdown drops leading spaces: non-breaking ones, then an arrow
            row[0] = "&nbsp;" * 4 * (depth - 1) + "↳ " + row[0]
    blocks.append(md_table([c.header for c in table.columns], aligns, rows))
    return blocks
