"""The phases tables, built once on the report document: every phase as a tree (a phase inside
another indented under it), or, where a program opened more phases than a report lists (a phase
per batch), one row per name, the longest first. The terminal and the Markdown report render
them; the HTML page has its own, with a timeline."""

from __future__ import annotations

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import longest_phases, phase_rows, phase_totals
from memgauge.render._document import Column, Section, Table
from memgauge.render._format import format_peak
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
    if len(rows) > most:
        return Section("", (_totals(p, len(rows), most),))
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
    return Section("", (table,))


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
