"""The page's views of the core's tables, built on the report document (``_document``): each a
``Table`` whose cells carry what the page sorts them by (``sorts``), a missing figure dimmed, and
the page's forms (``forms``: heat bars, a line's time split into its parts, a line's call stack, a
phase's indent). Each is the ``Only(("html",), ...)`` part of the section that has the same rows
for the text reports (``_section_lines``, ``_section_phases``): the page shows more rows and more
columns (a line's function, its share of the peak, its callers).
"""

from __future__ import annotations

from memgauge._units import format_bytes, format_seconds
from memgauge.render._document import Block, CellTone, Column, Only, Section, Table, TableCell
from memgauge.render._document_forms import CellForm, Heat, Split

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def cell(text: str, sort: float | str | None, form: CellForm | None = None, tone: CellTone = "") -> TableCell:
    """A cell of a page's table: its text, what it sorts by (None: nothing, a missing value), its
    form and its tone."""
    return TableCell(text, tone, sort, form=form)


NA = cell("—", None, tone="dim")  # a missing figure: dimmed, sorted by nothing


def said(value: object) -> TableCell:
    """Words or a name, sorted as text (a pid too, as the page always sorted it)."""
    return cell(str(value), str(value))


def nbytes(n: float | None, *, signed: bool = False) -> TableCell:
    return NA if n is None else cell(format_bytes(n, signed=signed), float(n))


def seconds(s: float | None) -> TableCell:
    return NA if s is None else cell(format_seconds(s), float(s))


def share(part: float, whole: float) -> TableCell:
    value = part / whole if whole else 0.0
    return cell(f"{value:.0%}", value)


def heat(value: float, top: float, label: str, *, negative: bool = False) -> TableCell:
    """``label`` over a bar of ``value``'s share of ``top``, sorted by the value."""
    return cell(label, float(value), Heat(value, top, negative))


def split(python: float, native: float, wait: float, contention: float = 0.0) -> TableCell:
    """A line's time as Python / native / waiting shares, and contention only where there is some;
    sorted by its Python share."""
    total = python + native + wait + contention
    if total <= 0:
        return cell("", 0.0)
    label = f"{python / total:.0%} / {native / total:.0%} / {wait / total:.0%}"
    if contention / total >= 0.005:
        label += f" · {contention / total:.0%} CPU contention"
    return cell(label, python / total, Split(python, native, wait, contention))


def page_table(columns: Sequence[Column], rows: Sequence[Sequence[TableCell]], title: str = "") -> Table:
    """A page's table: ``title`` "" under its section's heading."""
    return Table(title, tuple(columns), (), cells=tuple(tuple(row) for row in rows))


def figures(*headers: str) -> list[Column]:
    return [Column(header) for header in headers]


LINE = Column("line", role="path", code=True)
SOURCE = Column("source", role="rest", code=True)
FUNCTION = Column("function", role="words")


def views(text: Sequence[Block], page: Section | None, after: Sequence[Block] = ()) -> Section | None:
    """One section of the text reports' ``text`` blocks and the ``page``'s (under the page's
    heading and note), then ``after``, which every format shows; None where none has any."""
    blocks: list[Block] = [Only(("terminal", "markdown"), tuple(text))] if text else []
    blocks += [Only(("html",), page.blocks)] if page is not None else []
    blocks += after
    if not blocks:
        return None
    return Section(page.heading, tuple(blocks), page.note) if page is not None else Section("", tuple(blocks))
