"""Each format's view of the report document where the formats see a block each their own way: a
table's columns for one format (the page's alone, the text reports' alone, the page's own form of
a column), and the page's charts of a section, with their data, wherever they sit in it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import TypeVar

from memgauge.render._document import Block, Chart, Charts, Format, Only, Section, Table

T = TypeVar("T")


def shown_in(table: Table, fmt: Format) -> Table:
    """``table`` with only the columns ``fmt`` shows, the page's in their page's form; the same
    table where it shows them all."""
    keep = [i for i, c in enumerate(table.columns) if fmt in c.formats]
    page = fmt == "html" and any(c.page is not None for c in table.columns)
    if len(keep) == len(table.columns) and not page:
        return table
    forms = [c.page if page and c.page is not None else c for c in table.columns]
    columns = tuple(forms[i] for i in keep)
    headers = {c.header for c in columns}
    optional = tuple(h for h in table.optional if h in headers)
    if table.cells:
        cells = tuple(tuple(row[i] for i in keep) for row in table.cells)
        return replace(table, columns=columns, rows=(), tones=(), sorts=(), cells=cells, optional=optional)

    def kept(cells: tuple[tuple[T, ...], ...]) -> tuple[tuple[T, ...], ...]:
        return tuple(tuple(row[i] for i in keep) for row in cells)

    return replace(
        table,
        columns=columns,
        rows=kept(table.rows),
        tones=kept(table.tones),
        sorts=kept(table.sorts),
        forms=kept(table.forms),
        optional=optional,
    )


def chart_blocks(section: Section) -> list[Chart]:
    """The section's charts in the order the page shows them, those inside ``Charts`` and the
    page's ``Only`` blocks too."""
    return list(_charts(section.blocks))


def _charts(blocks: Iterable[Block]) -> Iterator[Chart]:
    for block in blocks:
        if isinstance(block, Chart):
            yield block
        elif isinstance(block, Charts):
            yield from block.charts
        elif isinstance(block, Only) and "html" in block.formats:
            yield from _charts(block.blocks)
