"""The neutral report document: what a section says, built once, with no format in it.

A section's build function takes a ``Profile`` and returns a ``Section`` (or None: nothing to say,
so no heading, no blank chart, no "steps 0"): a heading and a note for the page, and blocks,
each a ``Heading`` (a title of the text reports), a ``Line`` of figures (spans with tones, broken
only between its parts), a ``Sparkline``, a ``Table`` (columns with roles, how each
gives way to a narrow terminal), a ``Paragraph`` (with a tone), ``Items``, a ``Finding`` (a titled
piece of advice and the figures it rests on), ``Named`` values, or a ``Chart``, ``Charts`` or
``Cards`` (the HTML page's canvas, its charts in a grid, its figures in boxes; the text formats
have none). One backend per format renders it (``_document_terminal``, ``_document_markdown``,
``_document_html``), so a table's columns, titles and order are the same in every format.

``SECTIONS`` (in ``_sections``) lists the sections in report order; a new section registers there
and appears in every format without touching the renderers.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import EllipsisType
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from memgauge.render._document_forms import CellForm

# how a column gives way on a narrow terminal (``_layout``'s roles; a "label" is a figure set
# left, never cut: a package's name); HTML and Markdown align a figure right and the others left
Role = Literal["name", "figure", "label", "rest", "words", "path"]
# "strong": the sentence that matters most; "bad": a problem; "warn": a caution; "dim": a remark
Tone = Literal["", "strong", "bad", "warn", "dim"]


@dataclass(frozen=True)
class Column:
    header: str
    role: Role = "figure"
    most: int | None = None  # a name's widest
    least: int = 10  # a name's or a rest's narrowest
    keep: bool = False  # a rest that is cut to ``least`` but never left out
    code: bool = False  # its cells are code (a module's or a file's name): set as code where it can
    dim: bool = False  # its cells are a remark beside the row (a line's source): dimmed where it can
    # where a format has no width to fit (Markdown), each cell is stripped and cut to this many
    # characters; the terminal's layout cuts to the width it has
    clip: int | None = None
    # a figure's narrowest on the terminal, wider than its cells need: a table whose columns stay
    # put whatever its figures (the processes', whose pids and peaks differ from run to run)
    width: int = 0
    # the cell that stands for a missing value in a ``code`` column ("(unknown)"): set as words,
    # not as code, where a format can tell them apart
    absent: str = ""
    # what the terminal's note of the columns it left out calls it (a table's ``left_out``)
    short: str = ""
    # the formats that show it: a column of the page's alone (its sortable figures beside the
    # text's one cell that says them together), or of the text reports' alone
    formats: tuple[Format, ...] = ("terminal", "markdown", "html")
    # the page's form of it where the page sets it otherwise (its own header, a code column):
    # the same cells under it
    page: Column | None = None


@dataclass(frozen=True)
class TableCell:
    """A cell with more to it on the page (a ``Table``'s ``cells``): ``sort``, the page's key to
    sort its column by (None: none, a missing value's; ``...``: what the page shows), and
    ``page``, what the page shows where it words the cell otherwise, in parts each with its tone
    (a missing figure's dim "—", where the text reports leave the cell empty)."""

    text: str
    tone: CellTone = ""
    sort: float | str | EllipsisType | None = ...
    page: tuple[tuple[str, CellTone], ...] | None = None
    form: CellForm | None = None  # what the page draws it as (``Table.forms``)


@dataclass(frozen=True)
class Table:
    """Rows of text under ``columns``; ``title`` above it (the terminal's table title, a bold line
    in Markdown, a sub-heading on the page); ``optional``: the headers of the columns a narrow
    terminal may leave out, least useful first; ``cls``: the page's class for it."""

    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[str, ...], ...]
    optional: tuple[str, ...] = ()
    cls: str = ""
    anchor: str = ""  # the page's id for its title
    # a tree's rows: how deep each row's first cell is nested (a phase inside another), shown as
    # each format indents; empty: a flat table
    depths: tuple[int, ...] = ()
    # each cell's tone (a failure's "bad", the figure that answers "strong"), row by row; empty:
    # none has one
    tones: tuple[tuple[CellTone, ...], ...] = ()
    # the terminal takes back an optional column left out where one left out after it made room
    # (``Layout.fit``'s): where each is as good as another (a sweep's metrics)
    second_chance: bool = False
    # where set, the terminal says after the table which optional columns it left out, after
    # these words ("left out to fit the width"), each by its column's ``short``
    left_out: str = ""
    # what the page sorts each cell by (None: nothing, a missing value); empty: by its text
    sorts: tuple[tuple[float | str | None, ...], ...] = ()
    # each cell's form on the page (``_document_forms``), row by row (None: as it is); empty: none
    forms: tuple[tuple[CellForm | None, ...], ...] = ()
    # the table cell by cell (``TableCell``): it gives the rows, tones, sort keys and forms
    cells: tuple[tuple[TableCell, ...], ...] = ()
    # the page leaves out a column with nothing in any row (the text reports choose their own)
    drop_empty: bool = False

    def __post_init__(self) -> None:
        if self.cells:
            self._from_cells()
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(f"a row of {len(row)} cells under {len(self.columns)} columns")
        if self.depths and len(self.depths) != len(self.rows):
            raise ValueError(f"{len(self.depths)} depths for {len(self.rows)} rows")
        if self.tones and [len(t) for t in self.tones] != [len(r) for r in self.rows]:
            raise ValueError("a tone for each cell of each row, or none")
        if self.sorts and [len(k) for k in self.sorts] != [len(r) for r in self.rows]:
            raise ValueError("a sort key for each cell of each row, or none")
        if self.forms and [len(f) for f in self.forms] != [len(r) for r in self.rows]:
            raise ValueError("a form for each cell of each row, or none")

    def _from_cells(self) -> None:
        """Rows, tones and sort keys from the cells: the page reads its keys from ``sorts``."""
        if self.rows or self.tones or self.sorts or self.forms:
            raise ValueError("a table's cells, or its rows, tones, sort keys and forms")
        depths = self.depths or (0,) * len(self.cells)
        sorts = tuple(
            tuple(_sort_key(cell, depth if i == 0 else 0) for i, cell in enumerate(row))
            for row, depth in zip(self.cells, depths, strict=False)
        )
        object.__setattr__(self, "rows", tuple(tuple(c.text for c in row) for row in self.cells))
        object.__setattr__(self, "tones", tuple(tuple(c.tone for c in row) for row in self.cells))
        object.__setattr__(self, "sorts", sorts)
        if any(c.form is not None for row in self.cells for c in row):
            object.__setattr__(self, "forms", tuple(tuple(c.form for c in row) for row in self.cells))


def _sort_key(cell: TableCell, depth: int) -> float | str | None:
    """A cell's key, else the words it shows (a nested row's first cell with its indent)."""
    if cell.sort is not ...:
        return cell.sort
    return "\u00a0\u00a0" * depth + "".join(words for words, _ in cell.page or ((cell.text, cell.tone),))


@dataclass(frozen=True)
class Heading:
    """A title over the blocks after it in the text reports (bold); the page leaves out one that
    repeats its section's heading, as it does a table's title, and sets another as a sub-heading.
    ``code``: code after the words (a command: the report's title), None for none; ``level``: a
    Markdown heading of that level (0: a bold line)."""

    text: str
    code: str | None = None
    level: int = 0


# a span's tone: "figure" is a headline's figure (bold, and in colour where there is colour);
# "good" and "bad" an outcome's; "code" a command's or a file's name; the others as a ``Tone``
SpanTone = Literal["", "strong", "figure", "good", "bad", "dim", "code"]


@dataclass(frozen=True)
class Span:
    text: str
    tone: SpanTone = ""


@dataclass(frozen=True)
class Line:
    """Figures on a line, broken only between its ``parts`` (a part's spans stay together, so
    that a figure keeps its unit) where the terminal is too narrow: the next lines start with
    ``indent``, the first with ``lead``. Markdown has no width: its parts joined by spaces on one
    line; with ``joined``, after the line before it and a " · "; an ``item`` is one of a list
    (consecutive items: one list)."""

    parts: tuple[tuple[Span, ...], ...]
    lead: str = ""
    indent: str = "  "
    joined: bool = False
    item: bool = False


@dataclass(frozen=True)
class Sparkline:
    """A series drawn in characters after ``label``, then ``tail`` (its range, in words): as wide
    as the terminal leaves it (at most 60), 60 characters in Markdown."""

    label: str
    values: tuple[float, ...]
    tail: str


@dataclass(frozen=True)
class Paragraph:
    text: str
    tone: Tone = ""
    anchor: str = ""  # the page's id for it
    # one line, never wrapped: cut at the terminal's width (a program's own line, quoted)
    cut: bool = False


@dataclass(frozen=True)
class Items:
    """Short notes, one a line (a list on the page)."""

    texts: tuple[str, ...]


@dataclass(frozen=True)
class Finding:
    """A piece of advice: its ``title`` and the code it is about (``where``, a ``file:line``),
    the ``figures`` it rests on (label, value; a value is never broken across lines), and the
    ``detail``: what to do; ``kind``: what the page knows it by."""

    title: str
    where: str = ""
    figures: tuple[tuple[str, str], ...] = ()
    detail: str = ""
    kind: str = ""


@dataclass(frozen=True)
class Chart:
    """A chart of the HTML page (its canvas, drawn by the page's script from the page's data):
    in ``Charts``, under its ``title``, ``tall`` where it needs the height (a law and its
    interval); ``data``: what the page's script draws it from, where the chart carries it."""

    id: str
    title: str = ""
    tall: bool = False
    data: dict[str, Any] | None = None


@dataclass(frozen=True)
class Charts:
    """The page's charts side by side, as many a row as the page is wide (the text reports have
    none)."""

    charts: tuple[Chart, ...]


@dataclass(frozen=True)
class Named:
    """Names, each with its value, one a line: the name as code (a sweep's parameters and their
    values); nothing for none."""

    pairs: tuple[tuple[str, str], ...]


# -- the comparison's blocks (``memgauge compare``) ---------------------------------------------------

# a format that a block of ``Only`` is for
Format = Literal["terminal", "markdown", "html"]


@dataclass(frozen=True)
class Only:
    """Blocks that only ``formats`` show: where the formats word a thing each its own way (the
    comparison's title, a line of figures in the terminal, a heading in Markdown; the page has its
    sections' headings) and each keeps its wording."""

    formats: tuple[Format, ...]
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Change:
    """One run's figure in a ``Compared`` row and, for a run after the baseline, its ``delta`` and
    ``ratio`` against it (None: none to give, "—" in the text reports); ``tone``: whether the
    change is for the better; ``sort``: what the page sorts the cell by."""

    value: str
    delta: str | None = None
    ratio: str | None = None
    tone: Literal["", "good", "bad"] = ""
    sort: float | str | None = None


@dataclass(frozen=True)
class Compared:
    """Runs side by side: each row its texts under ``columns``, then a figure of each of ``runs``
    (the baseline first); with ``changes``, each later run's change against the baseline: its
    delta and ratio columns in the text reports (a narrow terminal leaves out the ratios, then the
    deltas), under its figure on the page. ``title``: the terminal's title over it (Markdown and
    the page have headings of their own); ``figures_first``: the terminal sets the texts last (a
    line's source, cut to what is left); ``depths``: how deep each row's first text is nested;
    ``labels``: the page's one text cell of each row in place of its texts, with its sort key (a
    phase's name and which of its figures, sorted by the name)."""

    title: str
    columns: tuple[Column, ...]
    runs: tuple[str, ...]
    rows: tuple[tuple[tuple[str, ...], tuple[Change, ...]], ...]
    changes: bool = True
    figures_first: bool = False
    depths: tuple[int, ...] = ()
    labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Runs:
    """The runs compared, the baseline first: each one's name, how it ended (in a tone: "good",
    "bad" or none) and its command; a line each in the terminal, a table's row each in Markdown,
    a column each on the page."""

    names: tuple[str, ...]
    exits: tuple[tuple[str, SpanTone], ...]
    commands: tuple[str, ...]


@dataclass(frozen=True)
class Breaks:
    """Sentences one a line: the terminal's lines in ``tone``, Markdown's lines of one paragraph
    (``quote``: of a quote), the page's list; ``lead`` goes before each in the text reports (the
    page has them under a heading)."""

    texts: tuple[str, ...]
    tone: Tone = ""
    lead: str = ""
    quote: bool = False


# -- the profile report's blocks ---------------------------------------------------------------------


@dataclass(frozen=True)
class Sum:
    """A figure as the sum of its parts: ``terms``, the figure then each part (a sign, a name, a
    figure), each never broken; ``notes``: remarks under it. A span's "figure" tone is bold on the
    page; the text reports set the terms as they are."""

    terms: tuple[tuple[Span, ...], ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Sums:
    """Sums one after another (each process's peak reconciled): in the terminal, each on as few
    lines as the width allows, the lines after its first under its '=' (or a short indent where
    that is past the middle) and its notes indented under it; one list in Markdown (the notes a
    list under their sum's item); a paragraph each on the page, its notes a list."""

    sums: tuple[Sum, ...]


@dataclass(frozen=True)
class Notes:
    """Cautions about the figures above: "note: ..." lines in the terminal (yellow), a quote in
    Markdown (a paragraph each), a list on the page."""

    texts: tuple[str, ...]


@dataclass(frozen=True)
class Card:
    """A figure in a box: its ``label``, its ``value``, the line under it (``sub``) and the page's
    class for the box ("peak", "good", "bad" or none)."""

    label: str
    value: str
    sub: str = ""
    cls: str = ""


@dataclass(frozen=True)
class Cards:
    """The figures that open the page, in boxes; the text reports say them in their header."""

    cards: tuple[Card, ...]


# the page's own blocks: the text reports leave them out
_Page = Chart | Charts | Cards
_Every = Heading | Line | Sparkline | Table | Paragraph | Items | Finding | Named | Sums | Notes
Block = _Every | Only | Compared | Runs | Breaks | _Page


@dataclass(frozen=True)
class Section:
    """What one section says: ``heading`` and ``note`` head it on the page (the text reports are
    terse: their tables carry their own titles), ``blocks`` in order."""

    heading: str
    blocks: tuple[Block, ...]
    note: str = ""


# a table cell's tone: a span's (``SpanTone``), a caution's ("warn"), a failure that answers
# ("alarm": none fits, over the limit; as "bad" in the text reports, bold too on the page) or an
# outcome with nothing wrong ("ok": plain, in a span of its own on the page as a failure is)
CellTone = Literal["", "strong", "figure", "good", "bad", "warn", "dim", "code", "alarm", "ok"]


def indented(texts: tuple[str, ...], depth: int, indent: str) -> tuple[str, ...]:
    """A ``Compared`` row's texts, the first after ``depth`` indents (none where it is empty: a
    row under its group's first)."""
    if not texts or not texts[0]:
        return texts
    return (indent * depth + texts[0], *texts[1:])
