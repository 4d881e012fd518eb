"""The core report's processes table, the peak's notes, its advice and the footer of memgauge's
own cost, built once on the report document (``_document``). Each report places them where it has
them (the terminal and Markdown reports the processes after the phases and the advice at the end;
the page its advice first, the notes in its summary; only the terminal has the footer). The page's
processes table is its own, in the same section: more rows, each process's parent, start and
lifetime, sorted by value."""

from __future__ import annotations

import shlex

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import advise, overhead_summary, top_processes
from memgauge.render._document import (
    CellTone,
    Column,
    Finding,
    Heading,
    Notes,
    Only,
    Paragraph,
    Section,
    Table,
)
from memgauge.render._format import format_peak
from memgauge.render._text import processes_title

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.model import ProcessRecord, Profile

ADVICE = "advice"
ADVICE_NOTE = "Each piece of advice shows the figures it rests on."
UNKNOWN = "(unknown)"  # a process whose command line could not be read

# the figures at fixed widths, so that two reports' tables line up; the command takes the rest,
# cut at its end (never left out: it is what tells the processes apart)
_PROCESS_COLUMNS = (
    Column("pid", width=7),
    Column("peak", width=9),
    Column("cpu", width=8),
    Column("command", role="rest", keep=True, code=True, absent=UNKNOWN),
)


def processes_table(p: Profile, most: int) -> Section | None:
    """The ``most`` processes with the highest peaks (the page's ``_PAGE_PROCESSES``); nothing for a
    program of one process."""
    if len(p.processes) <= 1:
        return None
    shown = top_processes(p, most)
    rows = tuple(
        (
            str(proc.pid),
            format_bytes(proc.peak_resident_bytes),
            format_seconds(proc.cpu_user_seconds + proc.cpu_system_seconds),
            shlex.join(proc.cmdline) if proc.cmdline else UNKNOWN,
        )
        for proc in shown
    )
    text = Table(processes_title(len(shown), len(p.processes)), _PROCESS_COLUMNS, rows)
    page = _page_processes(p)
    return Section(page.title, (Only(("terminal", "markdown"), (text,)), Only(("html",), (page,))))


_PAGE_PROCESSES = 30
# the page's: the command is code even where it is unknown, as it always was there
_PAGE_COLUMNS = (
    *(Column(h) for h in ("pid", "parent", "peak", "CPU", "start", "lived")),
    Column("command", role="rest", code=True),
)
_NA = "—"  # a missing figure on the page, dimmed and sorted by nothing


def _page_processes(p: Profile) -> Table:
    shown = top_processes(p, _PAGE_PROCESSES)
    rows: list[tuple[str, ...]] = []
    sorts: list[tuple[float | str | None, ...]] = []
    tones: list[tuple[CellTone, ...]] = []
    for x in shown:
        cells = _process_cells(x)
        rows.append(tuple(shown_text for shown_text, _ in cells))
        sorts.append(tuple(key for _, key in cells))
        tones.append(tuple("dim" if key is None else "" for _, key in cells))
    return Table(
        processes_title(len(shown), len(p.processes)),
        _PAGE_COLUMNS,
        tuple(rows),
        sorts=tuple(sorts),
        tones=tuple(tones),
    )


def _process_cells(x: ProcessRecord) -> list[tuple[str, float | str | None]]:
    """A process's cells on the page and what each sorts by."""
    lived = None if x.end_seconds is None else x.end_seconds - x.start_seconds
    command = shlex.join(x.cmdline) if x.cmdline else UNKNOWN
    cells: list[tuple[str, float | str | None]] = [
        (str(x.pid), str(x.pid)),
        (_NA, None) if x.ppid is None else (str(x.ppid), str(x.ppid)),
        (format_peak(x.peak_resident_bytes, x.peak_exact), x.peak_resident_bytes),
    ]
    for s in (x.cpu_user_seconds + x.cpu_system_seconds, x.start_seconds, lived):
        cells.append((_NA, None) if s is None else (format_seconds(s), float(s)))
    return [*cells, (command, command)]


def advice_section(p: Profile, cwd: str | None) -> Section | None:
    """Each piece of advice with the figures it rests on; no section at all without advice, so
    the reports of programs without it are unchanged."""
    found = advise(p, cwd)
    if not found:
        return None
    findings = tuple(
        Finding(a.title, a.where or "", tuple((e.label, e.value) for e in a.evidence), a.detail, a.kind)
        for a in found
    )
    return Section(ADVICE, (Heading(ADVICE), *findings), note=ADVICE_NOTE)


def peak_notes(p: Profile) -> Section | None:
    """What may make the peak's figures less than exact (processes ended between samples)."""
    return Section("", (Notes(tuple(p.peak.notes)),)) if p.peak.notes else None


def overhead_footer(p: Profile) -> Section | None:
    """What measuring cost: memgauge's time around the program and its own CPU. The terminal's
    alone: the Markdown report and the page are read apart from the run, and diffed (Markdown)."""
    summary = overhead_summary(p)
    if summary is None:
        return None
    steps = ", ".join(f"{name} {format_seconds(s)}" for name, s in summary.before)
    after = ", ".join(f"{name} {format_seconds(s)}" for name, s in summary.after)
    parts = ", ".join(f"{name} {format_seconds(s)}" for name, s in summary.cpu)
    text = (
        f"memgauge's own cost: {format_seconds(summary.before_seconds)} before the program's first "
        f"line ({steps}), {format_seconds(summary.after_seconds)} after its last ({after}); "
        f"CPU {format_seconds(summary.cpu_seconds)} ({parts})"
    )
    return Section("", (Only(("terminal",), (Paragraph(text, "dim"),)),))
