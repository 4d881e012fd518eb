"""The terminal reports' layout: borderless tables that fit the terminal's width, and lines that
break between figures, never inside one.

Every table of the run, sweep and comparison reports is laid out by ``Layout.fit``, one algorithm
for all: each column says how it gives way to a narrow terminal (its *role*), the table says which
columns it can do without (its optional columns, least useful first). rich alone would crop the
last columns mid-figure ("+75.4 Mi", "5" for "5 ms") or fold a short word while another column has
room to spare.

Roles:

- ``figure``: as wide as its widest cell, never cut (unless the table says ``cut_figures`` and
  nothing else is left to give way).
- ``words``: text that wraps between words, never narrower than its longest word (up to
  ``_MAX_WORD``, a longer one is folded) or ``_MIN_TEXT``; the text columns share what the others
  leave in proportion to what they would need unwrapped.
- ``name``: cut at its end, at most ``most`` characters, and cut further (down to ``least``)
  before any optional column goes; it takes back what leaving out a column made room for.
- ``path``: a ``file:line function`` location, cut from the start so that the file name and the
  line number stay; at most ``most``, at least ``least``. It leaves the ``rest`` column its
  ``least`` as long as it keeps ``alone`` itself; narrower, the rest goes and the path takes it.
- ``rest``: takes what the others leave, cut at its end; a ``removable`` one goes when that is
  under ``least`` (and is not counted when deciding which optional columns go), another is kept at
  ``least``.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich.console import Console, JustifyMethod, RenderableType
from rich.table import Column, Table
from rich.text import Text

# the narrowest a wrapped text column is allowed before figures are left out instead, unless a
# word of it is longer (up to _MAX_WORD: a longer word is folded)
_MIN_TEXT = 10
_MAX_WORD = 24
_GAP = 2  # between two columns: pad_edge=False leaves no padding outside the first and last
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_TAIL = re.compile(r"(?:\s|\x1b\[[0-9;]*m)+$")

Kind = Literal["figure", "words", "name", "path", "rest"]


@dataclass(frozen=True)
class _Role:
    kind: Kind
    most: int | None = None
    least: int = 0
    alone: int = 0
    removable: bool = False


def console(buf: io.StringIO, width: int, color: bool) -> Console:
    """A console writing into ``buf``: fixed width, colour only when asked, no guessing (inside a
    Jupyter kernel rich would otherwise send the output to the notebook instead of ``buf``)."""
    return Console(
        file=buf,
        width=width,
        force_terminal=color,
        force_jupyter=False,
        no_color=not color,
        highlight=False,
        soft_wrap=False,
    )


def without_trailing_blanks(text: str) -> str:
    """``text`` with no blanks at the end of its lines (rich pads every cell to its column's width:
    spaces nobody sees, that a diff or a pager shows), keeping the colour codes among them."""
    out = []
    for line in text.splitlines():
        tail = _TAIL.search(line)
        out.append(line if tail is None else line[: tail.start()] + "".join(_ANSI.findall(tail.group())))
    return "".join(line + "\n" for line in out)


def wrapped(parts: Sequence[Text], width: int, indent: str = "  ") -> Text:
    """``parts`` joined by spaces on as many lines as ``width`` needs, broken only between parts,
    so that a figure keeps its unit ("657 ms", not "657" and "ms" on the next line). A part
    longer than a line is left to the console to fold."""
    out = Text()
    used = 0
    for part in parts:
        if used and used + 1 + part.cell_len > width:
            out.append("\n" + indent)
            used = len(indent)
        elif used:
            out.append(" ")
            used += 1
        out.append_text(part)
        used += part.cell_len
    return out


def cut_left(where: str, width: int) -> str:
    """``path:line function`` in ``width`` characters: the path loses its start first, then the
    function goes; the line number stays."""
    head, _, function = where.partition(" ")
    path, colon, line = head.rpartition(":")
    if not colon or not line.isdigit():
        return "…" + where[len(where) - width + 1 :]
    tail = f":{line} {function}" if function else f":{line}"
    if function and width - len(tail) < 5:
        tail = f":{line}"
    if len(path) + len(tail) <= width:
        return path + tail
    room = max(1, width - len(tail) - 1)
    return "…" + path[len(path) - room :] + tail


def remove_column(table: Table, column: Column) -> None:
    """Take ``column`` out of ``table``, rows and all (a column holds its own cells)."""
    table.columns[:] = [c for c in table.columns if c is not column]
    # rich pads a column by its index (the first and last have no outer padding): renumber, or
    # it measures the columns after the removed one a character off and cuts a figure
    for i, c in enumerate(table.columns):
        c._index = i


class Layout:
    """A borderless table ``width`` characters wide at most, under ``title`` (a table as wide as
    its title: the title is never wrapped), built column by column with their roles.

    Where even the columns that cannot go do not fit, the figures are kept whole and the terminal
    crops the table's end; with ``cut_figures``, rich cuts each of them a little instead ("409…").
    """

    def __init__(
        self, width: int, title: str | None = None, *, header: bool = True, cut_figures: bool = False
    ) -> None:
        self.width = width
        self.cut_figures = cut_figures
        self.table = Table(
            title=title,
            min_width=min(len(title), width) if title else None,
            title_justify="left",
            box=None,
            pad_edge=False,
            header_style="bold",
            show_header=header,
        )
        self._roles: dict[int, _Role] = {}

    def _add(self, header: str | Text, role: _Role, justify: JustifyMethod, wrap: bool) -> Column:
        if wrap:
            # text wraps between words; a word longer than its column is folded, never lost
            self.table.add_column(header, justify=justify, overflow="fold")
        else:
            self.table.add_column(header, justify=justify, no_wrap=True, overflow="ellipsis")
        column = self.table.columns[-1]
        self._roles[id(column)] = role
        return column

    def figure(self, header: str | Text, justify: JustifyMethod = "right", *, least: int = 0) -> Column:
        """``least``: its narrowest, where its cells are narrower (a column that stays put)."""
        return self._add(header, _Role("figure", least=least), justify, wrap=False)

    def words(self, header: str | Text) -> Column:
        return self._add(header, _Role("words"), "left", wrap=True)

    def name(self, header: str | Text, *, most: int | None = None, least: int = 10) -> Column:
        return self._add(header, _Role("name", most=most, least=least), "left", wrap=False)

    def path(self, header: str | Text, *, most: int = 48, least: int = 12, alone: int = 16) -> Column:
        return self._add(header, _Role("path", most=most, least=least, alone=alone), "left", wrap=False)

    def rest(self, header: str | Text, *, least: int, removable: bool = True) -> Column:
        return self._add(header, _Role("rest", least=least, removable=removable), "left", wrap=False)

    def add_row(self, *cells: RenderableType) -> None:
        self.table.add_row(*cells)

    def named(self, *headers: str) -> list[Column]:
        """The columns with these headers, in this order (an absent one is skipped)."""
        found = [next((c for c in self.table.columns if str(c.header) == h), None) for h in headers]
        return [c for c in found if c is not None]

    # -- fitting ------------------------------------------------------------------------------------

    def _role(self, column: Column) -> _Role:
        return self._roles[id(column)]

    def _natural(self, column: Column) -> int:
        header = [len(str(column.header))] if self.table.show_header else []
        width = max([*header, *(len(str(c)) for c in column.cells)])
        role = self._role(column)
        if role.kind == "figure":
            return max(width, role.least)
        return width if role.most is None else min(width, role.most)

    def _narrowest(self, column: Column) -> int | None:
        """How narrow ``column`` can be and still be shown; None where it is not counted."""
        role = self._role(column)
        if role.kind == "figure":
            return self._natural(column)
        if role.kind == "words":
            header = [column.header] if self.table.show_header else []
            words = [len(w) for c in [*header, *column.cells] for w in str(c).split()]
            return min(self._natural(column), max(_MIN_TEXT, min(max(words, default=0), _MAX_WORD)))
        if role.kind == "name":
            return min(self._natural(column), role.least)
        if role.kind == "path":
            return role.least
        return None if role.removable else role.least

    def _needed(self, left_out: Sequence[Column] = ()) -> int:
        widths = [self._narrowest(c) for c in self.table.columns if all(c is not x for x in left_out)]
        counted = [w for w in widths if w is not None]
        return sum(counted) + _GAP * (len(counted) - 1)

    def fit(self, optional: Sequence[Column] = (), *, second_chance: bool = False) -> Table:
        """Leave out the ``optional`` columns, in order, while the others at their narrowest do not
        fit; then give each kept column its width. With ``second_chance``, a column left out is
        taken back where one left out after it made room for it: where each column is as good as
        another (a sweep's metrics); not where that would cut a name the column was left out to
        keep whole (a run report's phase names)."""
        table = self.table
        for column in self._left_out(optional, second_chance):
            remove_column(table, column)
        fits = self._needed() <= self.width
        widths: dict[int, int] = {}
        for column in table.columns:
            if self._role(column).kind == "figure":
                widths[id(column)] = column.max_width = self._natural(column)
                # a fixed width rich cannot reduce: where nothing fits, it crops the table's end
                column.min_width = None if self.cut_figures and not fits else column.max_width
        for column in table.columns:
            if self._role(column).kind == "name":
                self._cut_name(column, widths, fits)
        self._share_words(widths)
        for column in table.columns:
            if self._role(column).kind == "path":
                self._cut_path(column, widths)
        self._fill_rest(widths)
        return table

    def _left_out(self, optional: Sequence[Column], second_chance: bool) -> list[Column]:
        """The ``optional`` columns to leave out, in order, for the others to fit (see ``fit``)."""
        columns = self.table.columns
        dropped: list[Column] = []
        for column in optional:
            if self._needed(dropped) <= self.width:
                break
            if any(column is c for c in columns) and len(dropped) < len(columns) - 1:
                dropped.append(column)
        for column in dropped[-2::-1] if second_chance else ():
            if self._needed([c for c in dropped if c is not column]) <= self.width:
                dropped.remove(column)
        return dropped

    def _fill_rest(self, widths: dict[int, int]) -> None:
        """The "rest" columns get the room the others leave, or go where a removable one gets
        less than its least."""
        for column in list(self.table.columns):
            role = self._role(column)
            if role.kind == "rest":
                room = self._room(column, widths)
                if role.removable and room < role.least:
                    remove_column(self.table, column)
                else:
                    column.max_width = max(role.least, room)

    def _room(self, column: Column, widths: dict[int, int]) -> int:
        """What the columns whose widths are set, and the gaps, leave to ``column``."""
        others = [widths[id(c)] for c in self.table.columns if c is not column and id(c) in widths]
        return self.width - sum(others) - _GAP * len(others)

    def _cut_name(self, column: Column, widths: dict[int, int], fits: bool) -> None:
        natural = self._natural(column)
        least = self._narrowest(column) or 0
        # the others at their narrowest: the words give way before a name does
        others = [
            self._narrowest(c) for c in self.table.columns if c is not column and self._role(c).kind != "rest"
        ]
        counted = [w for w in others if w is not None]
        room = self.width - sum(counted) - _GAP * len(counted)
        width = min(natural, max(least, room))
        widths[id(column)] = column.max_width = width
        # a fixed width rich cannot reduce: where nothing fits, it would cut the last columns off
        column.min_width = width if fits else None

    def _share_words(self, widths: dict[int, int]) -> None:
        texts = [c for c in self.table.columns if self._role(c).kind == "words"]
        if not texts:
            return
        room = self.width - sum(widths.values()) - _GAP * (len(self.table.columns) - 1)
        natural = [self._natural(c) for c in texts]
        floors = [self._narrowest(c) or 0 for c in texts]
        if sum(natural) > room:
            spare = max(0, room - sum(floors))
            slack = sum(n - f for n, f in zip(natural, floors, strict=True)) or 1
            for column, n, f in zip(texts, natural, floors, strict=True):
                column.max_width = f + (n - f) * spare // slack
        for column, n in zip(texts, natural, strict=True):
            widths[id(column)] = min(n, column.max_width or n)

    def _cut_path(self, column: Column, widths: dict[int, int]) -> None:
        role = self._role(column)
        after = [c for c in self.table.columns if self._role(c).kind == "rest" and c is not column]
        # what the path and the rest after it share
        room = self._room(column, widths) - (_GAP if after else 0)
        rest = min((self._role(c).least for c in after), default=0)
        natural = self._natural(column)
        if after and room - rest >= role.alone:
            width = min(natural, room - rest)
        else:
            # too narrow for the rest too: the location matters more
            for c in after:
                remove_column(self.table, c)
            width = min(natural, max(role.least, room))
        for cell in column.cells:
            if isinstance(cell, Text) and len(cell.plain) > width:
                cell.plain = cut_left(cell.plain, width)
        widths[id(column)] = column.min_width = column.max_width = width
