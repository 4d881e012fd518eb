"""The phases tables, built once on the report document: every phase as a tree (a phase inside
another indented under it), or, where a program opened more phases than a report lists (a phase
per batch), one row per name, the longest first. The terminal and the Markdown report render
them; the page's view (its ``Only(("html",), ...)`` part) has a chart of the phases' time, up to
150 rows, each phase indented under the one it is inside, sorted by value."""

from __future__ import annotations

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import longest_phases, phase_rows, phase_totals
from memgauge.render._document import Chart, Column, Section, Table
from memgauge.render._document_forms import Indent
from memgauge.render._format import format_peak
from memgauge.render._section_page import cell, figures, nbytes, page_table, said, seconds, share, views
from memgauge.render._text import phase_totals_title

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.model import Profile

# a long phase name is cut, to 8 characters at the least, before a figure goes
_NAME = Column("phase", role="rest", least=8, keep=True)


def phases_table(p: Profile, most: int) -> Section | None:
    rows = phase_rows(p)
    if not rows:
        return None
    page = _page(p)
    if len(rows) > most:
        return views((_totals(p, len(rows), most),), page)
    columns = (_NAME, *(Column(name) for name in ("pid", "start", "duration", "share", "peak", "growth")))
    cells = tuple(
        (
            r.phase.name + ("" if r.phase.complete else " (unfinished)"),
            str(r.phase.pid),
            format_seconds(r.phase.start_seconds),
            format_seconds(r.phase.duration_seconds),
            f"{r.share:.0%}",
            format_peak(r.phase.peak_resident_bytes, r.phase.peak_exact),
            format_bytes(r.growth_bytes, signed=True),
        )
        for r in rows
    )
    depths = tuple(r.phase.depth for r in rows)
    table = Table("phases", columns, cells, optional=("start", "share", "pid", "growth"), depths=depths)
    return views((table,), page)


def _totals(p: Profile, records: int, most: int) -> Table:
    """A phase per batch: one row per name, the longest first when even the names are too many."""
    shown = longest_phases(p, most)
    wall = p.wall_seconds or 1.0
    columns = (_NAME, *(Column(name) for name in ("count", "total time", "share", "max peak")))
    cells = tuple(
        (
            t.name,
            str(t.count),
            format_seconds(t.seconds),
            f"{t.seconds / wall:.0%}",
            format_peak(t.peak_bytes, not t.lower_bound),
        )
        for t in shown
    )
    title = phase_totals_title(records, len(shown), len(phase_totals(p)))
    return Table(title, columns, cells, optional=("share", "count"))


_PAGE_ROWS = 150


def _page(p: Profile) -> Section:
    """The page's phases: every phase, or one row per name where there are more than 150 (the
    longest, where even the names are), after the chart of the longest names' time."""
    rows = phase_rows(p)
    chart = Chart("chart-phases")
    if len(rows) <= _PAGE_ROWS:
        body = [
            [
                cell(
                    r.phase.name,
                    r.phase.name,
                    Indent(r.phase.depth, "" if r.phase.complete else "(unfinished)"),
                ),
                said(r.phase.pid),
                seconds(r.phase.start_seconds),
                seconds(r.phase.duration_seconds),
                share(r.phase.duration_seconds, p.wall_seconds),
                cell(
                    format_peak(r.phase.peak_resident_bytes, r.phase.peak_exact), r.phase.peak_resident_bytes
                ),
                nbytes(r.growth_bytes, signed=True),
            ]
            for r in rows
        ]
        columns = [_NAME, *figures("pid", "start", "duration", "share", "peak", "growth")]
        return Section("phases", (chart, page_table(columns, body)))
    names = len(phase_totals(p))
    # distinct names (one per batch) would list every record again: the longest are kept
    shown = longest_phases(p, _PAGE_ROWS)
    body = [
        [
            said(t.name),
            cell(str(t.count), t.count),
            seconds(t.seconds),
            share(t.seconds, p.wall_seconds),
            cell(format_peak(t.peak_bytes, not t.lower_bound), t.peak_bytes),
        ]
        for t in shown
    ]
    columns = [_NAME, *figures("count", "total time", "share", "max peak")]
    note = f"{len(rows)} phase records, summed by name"
    note += f"; the {len(shown)} of {names} names with the most time." if names > len(shown) else "."
    return Section("phases", (chart, page_table(columns, body)), note)
