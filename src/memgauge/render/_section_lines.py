"""The core's line tables, built once on the report document (``_document``): the lines holding
the resident peak, the allocation peak's lines, CPU time by line, the waiting lines, the leak
suspects and what is still held at exit; and the slowest imports. The terminal and the Markdown
report render these same tables where each report has them; each section's page view
(``_section_lines_page``: more rows and columns, heat bars, call stacks and sorting) is its
``Only(("html",), ...)`` part, under the page's heading and note.

Every table has the figures, the process (where there are several), the line and its source: the
line is cut from its start on a narrow terminal, to keep its file name and number, and the source
takes what is left and goes first.
"""

from __future__ import annotations

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import import_totals, inherited_note, top_imports, waiting_lines
from memgauge.render._document import Block, Column, Only, Paragraph, Section, Span, Sum, Sums, Table
from memgauge.render._format import MAX_SOURCE
from memgauge.render._section_lines_page import (
    allocation_page,
    exit_page,
    held_page,
    imports_page,
    leaks_page,
    lines_page,
)
from memgauge.render._section_page import views
from memgauge.render._text import (
    CPU_TITLE,
    HELD_TITLE,
    LEAKS_TITLE,
    WAITING_TITLE,
    allocation_title,
    cpu_figures,
    cpu_rows,
    exit_title,
    imports_title,
    leak_figures,
    reconciliation_parts,
    where,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from memgauge.model import Profile

    # (figures, pid, file, line, source, function): ``function`` follows the location where one
    # line has two rows (a comprehension and the function around it)
    Row = tuple[Sequence[str], int, str, int, str, str]

# the CPU table's split of the time goes before the line does, on a narrow terminal
_CPU_OPTIONAL = ("python", "native", "contention", "wait", "gpu busy", "pid")


def line_table(
    p: Profile,
    title: str,
    figures: Sequence[str],
    rows: Sequence[Row],
    cwd: str | None,
    optional: tuple[str, ...] = ("pid",),
) -> Table:
    several = len(p.processes) > 1
    columns = [Column(name) for name in figures]
    columns += [Column("pid")] if several else []
    columns += [
        Column("line", role="path", most=48, least=12, code=True),
        Column("source", role="rest", least=14, code=True, dim=True, clip=MAX_SOURCE),
    ]
    cells = tuple(
        (*f, *([str(pid)] if several else []), where(file, line, cwd, function), source)
        for f, pid, file, line, source, function in rows
    )
    return Table(title, tuple(columns), cells, optional=optional)


def held_lines(p: Profile, cwd: str | None, most: int) -> Section | None:
    """The lines holding each process's resident peak, and whether forked workers' rows are pages
    shared with their parent."""
    entries = p.peak.attribution[:most]
    if not entries:
        return None
    rows = [([format_bytes(a.bytes)], a.pid, a.file, a.line, a.source, "") for a in entries]
    note = inherited_note(p)
    table = line_table(p, HELD_TITLE, ["bytes"], rows, cwd)
    return views((table,), held_page(p, cwd, most), (Paragraph(note, "dim"),) if note else ())


def allocation_lines(p: Profile, cwd: str | None, most: int) -> Section | None:
    """The lines holding the allocation peak (``--alloc``), then how each process's resident peak
    reconciles with it; the page has the reconciliation only under the allocation peak's lines."""
    alloc = p.allocation_peak
    rec = reconciliation(p)
    if alloc is None:
        return views((), None, rec[:1])
    rows = [([format_bytes(a.bytes)], a.pid, a.file, a.line, a.source, "") for a in alloc.attribution[:most]]
    table = line_table(p, allocation_title(alloc.bytes), ["bytes"], rows, cwd)
    return views((table,), allocation_page(p, alloc, cwd, most), rec)


def reconciliation(p: Profile) -> tuple[Block, ...]:
    """Each process's resident peak as the sum of its parts: the text reports name the process
    where there are several, the page always, with the peak in bold."""
    if not p.reconciliation:
        return ()
    several = len(p.processes) > 1
    said: list[Sum] = []
    shown: list[Sum] = []
    for r in p.reconciliation:
        parts = tuple((Span(term),) for term in reconciliation_parts(r))
        peak = format_bytes(r.resident_peak_bytes)
        head = f"[{r.pid}] process peak {peak}" if several else f"process peak {peak}"
        said.append(Sum(((Span(head),), *parts), tuple(r.notes)))
        shown.append(Sum(((Span(f"process {r.pid}: peak "), Span(peak, "figure")), *parts), tuple(r.notes)))
    return Only(("terminal", "markdown"), (Sums(tuple(said)),)), Only(("html",), (Sums(tuple(shown)),))


def cpu_lines(p: Profile, cwd: str | None, most: int) -> Section | None:
    """CPU time by line, then the lines that waited longest; the page's time and memory by line."""
    tables = []
    rows = cpu_rows(p, most)
    if rows:
        tables.append(line_table(p, CPU_TITLE, cpu_figures(p), rows, cwd, _CPU_OPTIONAL))
    waiting = [
        ([format_seconds(s.wait_seconds)], s.pid, s.file, s.line, s.source, "")
        for s in (r.stats for r in waiting_lines(p))
    ]
    if waiting:
        tables.append(line_table(p, WAITING_TITLE, ["wait"], waiting, cwd))
    return views(tables, lines_page(p, cwd, most))


def leak_suspects(p: Profile, cwd: str | None, most: int) -> Section | None:
    """The lines whose retained memory grew steadily."""
    if not p.leaks:
        return None
    rows = [
        (leak_figures(x.rate_bytes_per_second, x.retained_bytes), x.pid, x.file, x.line, x.source, "")
        for x in p.leaks[:most]
    ]
    return views((line_table(p, LEAKS_TITLE, ["rate", "retained"], rows, cwd),), leaks_page(p, cwd, most))


def held_at_exit(p: Profile, cwd: str | None, most: int) -> Section | None:
    """What the processes still held at exit, and why leaks were not judged."""
    # both absent from profiles without line samples: their reports are unchanged
    if not p.held_at_exit and not p.leak_note:
        return None
    note = (Paragraph(f"note: {p.leak_note}", "warn"),) if p.leak_note else ()
    page = exit_page(p, cwd, most)
    if not p.held_at_exit:
        return views((), Section(page.heading, (), page.note), note)
    rows = [([format_bytes(h.bytes)], h.pid, h.file, h.line, h.source, "") for h in p.held_at_exit[:most]]
    return views((line_table(p, exit_title(p), ["held"], rows, cwd),), page, note)


def slow_imports(p: Profile) -> Section | None:
    """The imports that took longest (at least 10 ms), with the memory each added; the page ranks
    them by memory, with its own table."""
    page = imports_page(p) if p.imports else None
    shown = top_imports(p, 5, by="time", least_seconds=0.01)
    if not shown:
        return views((), page)
    several = len(p.processes) > 1
    columns = [Column("package", role="label"), Column("time"), Column("memory"), Column("own time")]
    columns += [Column("pid")] if several else []
    rows = tuple(
        (
            r.package,
            format_seconds(r.seconds),
            format_bytes(r.resident_bytes, signed=True),
            format_seconds(r.self_seconds),
            *([str(r.pid)] if several else []),
        )
        for r in shown
    )
    table = Table(imports_title(import_totals(p)), tuple(columns), rows, optional=("own time", "pid"))
    return views((table,), page)
