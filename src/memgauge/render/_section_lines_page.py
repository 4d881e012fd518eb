"""The page's views of the core's line tables (``_section_lines`` places each in its section):
the lines holding the resident peak (each opens to its callers) and the allocation peak, time and
memory by line (heat bars and the time's Python / native / wait split), by function and by file,
the leak suspects, what was held at exit and the imports ranked by memory. Every line's figures
are sorted by value on the page."""

from __future__ import annotations

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import import_totals, rollup, short_path, top_imports, top_lines
from memgauge.render._document import Chart, Column, Section
from memgauge.render._document_forms import Stack
from memgauge.render._format import format_rate
from memgauge.render._section_page import (
    FUNCTION,
    LINE,
    NA,
    SOURCE,
    cell,
    figures,
    heat,
    nbytes,
    page_table,
    said,
    seconds,
    share,
    split,
)
from memgauge.render._text import exit_title, imports_title, where

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.model import AllocationPeak, Profile

MAX_IMPORT_ROWS = 30
_TIME_SPLIT = "Python / native / wait"


def _pid(p: Profile) -> list[Column]:
    return figures("pid") if len(p.processes) > 1 else []


def _frame(frame: str, cwd: str | None) -> str:
    file, _, line = frame.rpartition(":")
    return where(file, int(line), cwd) if file and line.isdigit() else frame


def held_page(p: Profile, cwd: str | None, most: int) -> Section:
    entries = p.peak.attribution[:most]
    top = max(a.bytes for a in entries)
    multi = len(p.processes) > 1
    rows = []
    for a in entries:
        at = where(a.file, a.line, cwd)
        stack = Stack(tuple(_frame(f, cwd) for f in a.stack)) if a.stack else None
        row = [heat(a.bytes, top, format_bytes(a.bytes)), share(a.bytes, p.peak.resident_bytes)]
        row += [said(a.pid)] if multi else []
        row += [cell(at, at, stack), said(a.function), said(a.source)]
        rows.append(row)
    table = page_table([*figures("held", "of peak"), *_pid(p), LINE, FUNCTION, SOURCE], rows)
    note = (
        "Sampled: the resident memory each line had added, and not yet given back, at each "
        "process's highest sample. Open a line for its callers."
    )
    return Section("resident peak held by", (table,), note)


def allocation_page(p: Profile, alloc: AllocationPeak, cwd: str | None, most: int) -> Section:
    entries = alloc.attribution[:most]
    top = max((a.bytes for a in entries), default=0)
    rows = [
        [
            heat(a.bytes, top, format_bytes(a.bytes)),
            share(a.bytes, alloc.bytes),
            said(a.pid),
            said(where(a.file, a.line, cwd)),
            said(a.function),
            said(a.source),
        ]
        for a in entries
    ]
    table = page_table([*figures("live", "of peak", "pid"), LINE, FUNCTION, SOURCE], rows)
    note = "From memray: heap allocations alive at each process's allocation peak."
    return Section(f"allocation peak {format_bytes(alloc.bytes)}, live at it", (table,), note)


def lines_page(p: Profile, cwd: str | None, most: int) -> Section | None:
    """Time and memory by line, most time first, with the line's share of the peak and its GPU
    time where a GPU was sampled."""
    shown = top_lines(p, most)
    if not shown:
        return None
    top_t = max(r.total_seconds for r in shown)
    top_m = max(abs(r.stats.resident_growth_bytes) for r in shown)
    held = {(a.pid, a.file, a.line): a.bytes for a in p.peak.attribution}
    gpu = any(s.gpu_seconds is not None for s in p.lines)  # a GPU sampled while lines ran
    multi = len(p.processes) > 1
    rows = []
    for r in shown:
        s = r.stats
        growth = s.resident_growth_bytes
        row = [
            heat(r.total_seconds, top_t, format_seconds(r.total_seconds)),
            split(s.cpu_python_seconds, s.cpu_native_seconds, s.wait_seconds, s.contention_seconds),
            seconds(s.cpu_python_seconds + s.cpu_native_seconds),
            heat(growth, top_m, format_bytes(growth, signed=True), negative=growth < 0),
            nbytes(held.get((s.pid, s.file, s.line))),
        ]
        busy = NA if s.gpu_busy is None else cell(f"{s.gpu_busy:.0f}%", s.gpu_busy)
        row += [seconds(s.gpu_seconds), busy] if gpu else []
        row += [said(s.pid)] if multi else []
        row += [said(where(s.file, s.line, cwd)), said(s.function), said(s.source)]
        rows.append(row)
    columns = figures("time", _TIME_SPLIT, "CPU", "memory", "held at peak")
    columns += figures("GPU", "GPU busy") if gpu else []
    columns += [*_pid(p), LINE, FUNCTION, SOURCE]
    count = f"{len(shown)} of {len(p.lines)} lines" if len(p.lines) > len(shown) else f"{len(shown)} lines"
    note = (
        f"Sampled; {count}, most time first. Time is summed over threads; native is C code "
        "(numpy, torch); memory is the net resident change while the line ran."
        + (" GPU is the device-seconds a kernel ran while the line ran (NVML, sampled)." if gpu else "")
    )
    return Section("time and memory by line", (page_table(columns, rows),), note)


def rollups(p: Profile, cwd: str | None, most: int) -> Section | None:
    """The lines' figures summed by function and by file: the page's alone."""
    if not p.lines:
        return None
    tables = []
    for by, title in (("function", "by function"), ("file", "by file")):
        shown = rollup(p, by)[:most]
        top = max((r.total_seconds for r in shown), default=0.0)
        rows = []
        for r in shown:
            name = [said(short_path(r.file, cwd))] + ([said(r.function)] if by == "function" else [])
            rows.append(
                [
                    heat(r.total_seconds, top, format_seconds(r.total_seconds)),
                    split(r.cpu_python_seconds, r.cpu_native_seconds, r.wait_seconds, r.contention_seconds),
                    nbytes(r.resident_growth_bytes, signed=True),
                    nbytes(r.peak_bytes or None),
                    said(r.lines),
                    *name,
                ]
            )
        columns = figures("time", _TIME_SPLIT, "memory", "held at peak", "lines")
        columns += [Column("file", role="path", code=True)] + ([FUNCTION] if by == "function" else [])
        tables.append(page_table(columns, rows, title))
    return Section("functions and files", tuple(tables))


def leaks_page(p: Profile, cwd: str | None, most: int) -> Section:
    rows = [
        [
            # sorted by the rate, not by the number before its unit
            cell(format_rate(x.rate_bytes_per_second), x.rate_bytes_per_second),
            nbytes(x.retained_bytes),
            seconds(x.first_seconds),
            said(f"{x.fit_r2:.3f}"),
            said(x.pid),
            said(where(x.file, x.line, cwd)),
            said(x.source),
        ]
        for x in p.leaks[:most]
    ]
    table = page_table([*figures("rate", "retained", "since", "fit R²", "pid"), LINE, SOURCE], rows)
    note = "Lines whose retained memory grew steadily, without release, until the end of the run."
    return Section("leak suspects", (table,), note)


def exit_page(p: Profile, cwd: str | None, most: int) -> Section:
    rows = [
        [nbytes(h.bytes), said(h.pid), said(where(h.file, h.line, cwd)), said(h.source)]
        for h in p.held_at_exit[:most]
    ]
    table = page_table([*figures("held", "pid"), LINE, SOURCE], rows)
    note = (
        "Lines whose growth was still resident when the run ended: what a script keeps until exit, "
        "whether or not it grew long enough to be judged a leak."
    )
    return Section(exit_title(p), (table,), note)


def imports_page(p: Profile) -> Section:
    """The first import of each package, the most memory first, after the chart of their own
    memory and time."""
    ranked = top_imports(p, by="memory")
    top = max((abs(r.resident_bytes) for r in ranked), default=0)
    rows = [
        [
            said(r.package),
            heat(r.resident_bytes, top, format_bytes(r.resident_bytes, signed=True)),
            nbytes(r.self_resident_bytes, signed=True),
            seconds(r.seconds),
            seconds(r.self_seconds),
            seconds(r.start_seconds),
            said(r.pid),
        ]
        for r in ranked[:MAX_IMPORT_ROWS]
    ]
    columns = [Column("package", role="label", code=True)]
    columns += figures("memory", "own memory", "time", "own time", "at", "pid")
    note = (
        "First import of each top-level package, largest first"
        + (f" ({MAX_IMPORT_ROWS} of {len(ranked)})" if len(ranked) > MAX_IMPORT_ROWS else "")
        + "; 'own' leaves out the packages it imported."
    )
    table = page_table(columns, rows)
    return Section(imports_title(import_totals(p)), (Chart("chart-imports"), table), note)
