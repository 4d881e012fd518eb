"""The frame every HTML page of memgauge shares: one self-contained file, offline.

Chart.js (MIT, vendored from the npm registry by ``scripts/vendor_chartjs.sh``), the stylesheet,
the page script and the page's data are all inlined. A Content-Security-Policy forbids every
fetch, so a report never reaches the network, even by mistake.

Also here: the table cells every page uses, and ``Sections``, the registry each kind of page keeps
its sections in (anchor, nav text, build function): the page's nav is built from it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any, Generic, NamedTuple, TypeVar

from memgauge._units import format_bytes, format_seconds
from memgauge.render._format import esc, script_json

CHARTJS_VERSION = "4.6.1"
CHARTJS_SHA256 = "87364cc2b2a76a6684929e7d6b80b18a897794db38400caff1fcf1791c6925d2"

_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"


@cache
def asset(name: str) -> str:
    return files("memgauge.render").joinpath("_assets").joinpath(name).read_text(encoding="utf-8")


def page(title: str, body: str, data: Any) -> str:
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta name="generator" content="memgauge; Chart.js {CHARTJS_VERSION}">\n'
        f"<title>{esc(title)}</title>\n"
        f"<style>\n{asset('report.css')}</style>\n"
        "</head>\n<body>\n"
        '<div id="memgauge-error" class="error" hidden></div>\n'
        f"{body}\n"
        f'<script type="application/json" id="memgauge-data">{script_json(data)}</script>\n'
        f"<script>\n{asset('chart.umd.min.js')}\n</script>\n"
        f"<script>\n{asset('report.js')}</script>\n"
        "</body>\n</html>\n"
    )


class Cell(NamedTuple):
    """Table cell: its HTML and, for sorting, its value."""

    html: str
    sort: float | str | None = None


def text(value: object) -> Cell:
    return Cell(esc(value), str(value))


def code(value: str) -> Cell:
    # the stylesheet cuts a long path or source line to its column: the title shows all of it
    return Cell(f'<code title="{esc(value)}">{esc(value)}</code>', value)


def nbytes(n: float | None, *, signed: bool = False) -> Cell:
    if n is None:
        return Cell('<span class="na">—</span>', None)
    return Cell(esc(format_bytes(n, signed=signed)), float(n))


def seconds(s: float | None) -> Cell:
    if s is None:
        return Cell('<span class="na">—</span>', None)
    return Cell(esc(format_seconds(s)), float(s))


def table(headers: Sequence[tuple[str, bool]], rows: Sequence[Sequence[Cell]], *, cls: str = "") -> str:
    """``headers``: (label, numeric). Sortable by clicking a header (the page script)."""
    head = "".join(
        f'<th class="{"num" if numeric else "txt"}">{esc(label)}</th>' for label, numeric in headers
    )
    body = []
    for row in rows:
        cells = []
        for (_, numeric), cell in zip(headers, row, strict=True):
            sort = "" if cell.sort is None else f' data-v="{esc(cell.sort)}"'
            cells.append(f'<td class="{"num" if numeric else "txt"}"{sort}>{cell.html}</td>')
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (
        f'<table class="sortable {cls}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )


NA = Cell('<span class="na">—</span>', None)


def cards(entries: Sequence[tuple[str, str, str, str]]) -> str:
    """Figures in boxes: (label, value, the line under it, its class: "good", "bad", ...)."""
    return "".join(
        f'<div class="card {cls}"><div class="label">{esc(label)}</div>'
        f'<div class="value">{esc(value)}</div><div class="sub">{esc(sub)}</div></div>'
        for label, value, sub, cls in entries
    )


def items(texts: Sequence[str]) -> str:
    """Notes as a list; nothing for none."""
    return "<ul class=notes>" + "".join(f"<li>{esc(t)}</li>" for t in texts) + "</ul>" if texts else ""


# -- sections and the page's nav ---------------------------------------------------------------------

T = TypeVar("T")


@dataclass(frozen=True)
class Part:
    """What a section's build function returns: its content, under its heading and note (HTML)
    when it has them (the summary that opens a page has neither)."""

    content: str
    heading: str = ""
    note: str = ""


@dataclass(frozen=True)
class Section(Generic[T]):
    """A section of a page: its anchor, the text of its link in the page's nav (None: no link),
    and the function that builds it from what the page shows (None: nothing to show)."""

    id: str
    nav: str | None
    build: Callable[[T], Part | None]


@dataclass(frozen=True)
class Group(Generic[T]):
    """Sections that come from elsewhere at this place of the page (the report document's, which
    every format renders): ``build`` gives each one's anchor, nav text and content."""

    build: Callable[[T], list[tuple[str, str | None, Part]]]


class Sections(Generic[T]):
    """The sections of one kind of page, in page order. The nav links the sections a page has:
    it is built from here, never from the page's text."""

    def __init__(self) -> None:
        self._sections: list[Section[T] | Group[T]] = []

    def register(self, id: str, nav: str | None, build: Callable[[T], Part | None]) -> None:
        if id in self.ids:
            raise ValueError(f"two sections with the id {id!r}")
        self._sections.append(Section(id, nav, build))

    def register_group(self, build: Callable[[T], list[tuple[str, str | None, Part]]]) -> None:
        self._sections.append(Group(build))

    @property
    def ids(self) -> list[str]:
        return [s.id for s in self._sections if isinstance(s, Section)]

    def _parts(self, subject: T) -> list[tuple[str, str | None, Part]]:
        out: list[tuple[str, str | None, Part]] = []
        for s in self._sections:
            if isinstance(s, Group):
                out += s.build(subject)
            elif (part := s.build(subject)) is not None:
                out.append((s.id, s.nav, part))
        return out

    def build(self, subject: T) -> tuple[str, str]:
        """The page's nav and its sections, for ``subject``."""
        nav: list[str] = []
        html: list[str] = []
        for id, link, part in self._parts(subject):
            if link is not None:
                nav.append(f'<a href="#{esc(id)}">{esc(link)}</a>')
            heading = f"<h2>{esc(part.heading)}</h2>" if part.heading else ""
            note = f'<p class="note">{part.note}</p>' if part.note else ""
            html.append(f'<section id="{esc(id)}">{heading}{note}{part.content}</section>\n')
        return "".join(nav), "".join(html)
