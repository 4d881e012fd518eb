"""The tables of the HTML report of one profile: phases, the lines holding the peak, the busiest
lines and their functions and files, leak suspects, imports, processes. Each is a section of the
page (registered in ``_html``): a function from a ``ProfileView`` to a ``Part``, or None when the
profile has nothing for it."""

from __future__ import annotations

from dataclasses import dataclass

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import (
    import_totals,
    inherited_note,
    longest_phases,
    phase_rows,
    phase_totals,
    rollup,
    short_path,
    top_imports,
    top_lines,
)
from memgauge.model import Profile
from memgauge.render._document import Section
from memgauge.render._document_html import section_part
from memgauge.render._format import esc, format_peak, format_rate
from memgauge.render._html_page import (
    NA,
    Cell,
    Part,
    code,
    heat,
    nbytes,
    seconds,
    share,
    split,
    table,
    text,
)
from memgauge.render._section_core import processes_table
from memgauge.render._section_lines import reconciliation
from memgauge.render._text import imports_title

MAX_PHASE_BARS = 20  # phase names on the share-of-wall-time chart (220 px high)
_MAX_PHASE_ROWS = 150
_MAX_IMPORT_ROWS = 30
_CHART = '<div class="chart"><canvas id="{}"></canvas></div>'


@dataclass(frozen=True)
class ProfileView:
    """What the sections of a profile's page are built from."""

    profile: Profile
    cwd: str | None
    max_lines: int

    def where(self, file: str, line: int) -> str:
        return f"{short_path(file, self.cwd)}:{line}" if line else file


def phases(v: ProfileView) -> Part | None:
    p = v.profile
    rows = phase_rows(p)
    if not rows:
        return None
    chart = _CHART.format("chart-phases")
    if len(rows) <= _MAX_PHASE_ROWS:
        body = [
            [
                Cell(
                    f'<span class="indent" style="--depth:{r.phase.depth}"></span>{esc(r.phase.name)}'
                    + ("" if r.phase.complete else ' <em class="bad">(unfinished)</em>'),
                    r.phase.name,
                ),
                text(r.phase.pid),
                seconds(r.phase.start_seconds),
                seconds(r.phase.duration_seconds),
                share(r.phase.duration_seconds, p.wall_seconds),
                Cell(
                    esc(format_peak(r.phase.peak_resident_bytes, r.phase.peak_exact)),
                    r.phase.peak_resident_bytes,
                ),
                nbytes(r.growth_bytes, signed=True),
            ]
            for r in rows
        ]
        headers = [("phase", False)] + [
            (h, True) for h in ("pid", "start", "duration", "share", "peak", "growth")
        ]
        return Part(chart + table(headers, body), "phases")
    names = len(phase_totals(p))
    # distinct names (one per batch) would list every record again: the longest are kept
    shown = longest_phases(p, _MAX_PHASE_ROWS)
    body = [
        [
            text(t.name),
            Cell(esc(str(t.count)), t.count),
            seconds(t.seconds),
            share(t.seconds, p.wall_seconds),
            Cell(esc(format_peak(t.peak_bytes, not t.lower_bound)), t.peak_bytes),
        ]
        for t in shown
    ]
    headers = [("phase", False)] + [(h, True) for h in ("count", "total time", "share", "max peak")]
    note = f"{len(rows)} phase records, summed by name"
    note += f"; the {len(shown)} of {names} names with the most time." if names > len(shown) else "."
    return Part(chart + table(headers, body), "phases", note)


def _stack_frame(v: ProfileView, frame: str) -> str:
    file, _, line = frame.rpartition(":")
    return v.where(file, int(line)) if file and line.isdigit() else frame


def attribution(v: ProfileView) -> Part | None:
    p = v.profile
    entries = p.peak.attribution[: v.max_lines]
    if not entries:
        return None
    top = max(a.bytes for a in entries)
    multi = len(p.processes) > 1
    body = []
    for a in entries:
        stack = "".join(f"<li><code>{esc(_stack_frame(v, f))}</code></li>" for f in a.stack)
        where = code(v.where(a.file, a.line))
        if stack:
            where = Cell(
                f"<details><summary>{where.html}</summary><ol class=stack>{stack}</ol></details>", where.sort
            )
        row = [heat(a.bytes, top, format_bytes(a.bytes)), share(a.bytes, p.peak.resident_bytes)]
        row += [text(a.pid)] if multi else []
        row += [where, text(a.function), code(a.source)]
        body.append(row)
    headers = [("held", True), ("of peak", True)] + ([("pid", True)] if multi else [])
    headers += [("line", False), ("function", False), ("source", False)]
    note = f'<p class="note">{esc(inherited_note(p))}</p>' if inherited_note(p) else ""
    return Part(
        table(headers, body) + note,
        "resident peak held by",
        "Sampled: the resident memory each line had added, and not yet given back, at each "
        "process's highest sample. Open a line for its callers.",
    )


def allocation(v: ProfileView) -> Part | None:
    alloc = v.profile.allocation_peak
    if alloc is None:
        return None
    entries = alloc.attribution[: v.max_lines]
    top = max((a.bytes for a in entries), default=0)
    body = [
        [
            heat(a.bytes, top, format_bytes(a.bytes)),
            share(a.bytes, alloc.bytes),
            text(a.pid),
            code(v.where(a.file, a.line)),
            text(a.function),
            code(a.source),
        ]
        for a in entries
    ]
    headers = [("live", True), ("of peak", True), ("pid", True)]
    headers += [("line", False), ("function", False), ("source", False)]
    # the reconciliation of each process's peak: the document's, as the text reports have it
    rec = section_part(Section("", reconciliation(v.profile))).content
    return Part(
        table(headers, body) + rec,
        f"allocation peak {format_bytes(alloc.bytes)}, live at it",
        "From memray: heap allocations alive at each process's allocation peak.",
    )


def lines(v: ProfileView) -> Part | None:
    p = v.profile
    rows = top_lines(p, v.max_lines)
    if not rows:
        return None
    multi = len(p.processes) > 1
    top_t = max(r.total_seconds for r in rows)
    top_m = max(abs(r.stats.resident_growth_bytes) for r in rows)
    held = {(a.pid, a.file, a.line): a.bytes for a in p.peak.attribution}
    gpu = any(s.gpu_seconds is not None for s in p.lines)  # a GPU sampled while lines ran
    body = []
    for r in rows:
        s = r.stats
        growth = s.resident_growth_bytes
        row = [
            heat(r.total_seconds, top_t, format_seconds(r.total_seconds)),
            split(s.cpu_python_seconds, s.cpu_native_seconds, s.wait_seconds, s.contention_seconds),
            seconds(s.cpu_python_seconds + s.cpu_native_seconds),
            heat(growth, top_m, format_bytes(growth, signed=True), negative=growth < 0),
            nbytes(held.get((s.pid, s.file, s.line))),
        ]
        busy = NA if s.gpu_busy is None else Cell(esc(f"{s.gpu_busy:.0f}%"), s.gpu_busy)
        row += [seconds(s.gpu_seconds), busy] if gpu else []
        row += [text(s.pid)] if multi else []
        row += [code(v.where(s.file, s.line)), text(s.function), code(s.source)]
        body.append(row)
    headers = [("time", True), ("Python / native / wait", True), ("CPU", True), ("memory", True)]
    headers += [("held at peak", True)] + ([("GPU", True), ("GPU busy", True)] if gpu else [])
    headers += [("pid", True)] if multi else []
    headers += [("line", False), ("function", False), ("source", False)]
    shown = f"{len(rows)} of {len(p.lines)} lines" if len(p.lines) > len(rows) else f"{len(rows)} lines"
    return Part(
        table(headers, body),
        "time and memory by line",
        f"Sampled; {shown}, most time first. Time is summed over threads; native is C code "
        "(numpy, torch); memory is the net resident change while the line ran."
        + (" GPU is the device-seconds a kernel ran while the line ran (NVML, sampled)." if gpu else ""),
    )


def rollups(v: ProfileView) -> Part | None:
    if not v.profile.lines:
        return None
    parts = []
    for by, title in (("function", "by function"), ("file", "by file")):
        rows = rollup(v.profile, by)[: v.max_lines]
        top = max((r.total_seconds for r in rows), default=0.0)
        body = []
        for r in rows:
            name = [code(short_path(r.file, v.cwd))]
            if by == "function":
                name.append(text(r.function))
            body.append(
                [
                    heat(r.total_seconds, top, format_seconds(r.total_seconds)),
                    split(r.cpu_python_seconds, r.cpu_native_seconds, r.wait_seconds, r.contention_seconds),
                    nbytes(r.resident_growth_bytes, signed=True),
                    nbytes(r.peak_bytes or None),
                    text(r.lines),
                    *name,
                ]
            )
        headers = [("time", True), ("Python / native / wait", True), ("memory", True)]
        headers += [("held at peak", True), ("lines", True), ("file", False)]
        if by == "function":
            headers.append(("function", False))
        parts.append(f"<h3>{esc(title)}</h3>" + table(headers, body))
    return Part("".join(parts), "functions and files")


def leaks(v: ProfileView) -> Part | None:
    if not v.profile.leaks:
        return None
    body = [
        [
            # sorted by the rate, not by the number before its unit
            Cell(esc(format_rate(x.rate_bytes_per_second)), x.rate_bytes_per_second),
            nbytes(x.retained_bytes),
            seconds(x.first_seconds),
            text(f"{x.fit_r2:.3f}"),
            text(x.pid),
            code(v.where(x.file, x.line)),
            code(x.source),
        ]
        for x in v.profile.leaks[: v.max_lines]
    ]
    headers = [("rate", True), ("retained", True), ("since", True), ("fit R²", True), ("pid", True)]
    headers += [("line", False), ("source", False)]
    return Part(
        table(headers, body),
        "leak suspects",
        "Lines whose retained memory grew steadily, without release, until the end of the run.",
    )


def imports(v: ProfileView) -> Part | None:
    p = v.profile
    if not p.imports:
        return None
    ranked = top_imports(p, by="memory")
    top = max((abs(r.resident_bytes) for r in ranked), default=0)
    body = [
        [
            code(r.package),
            heat(r.resident_bytes, top, format_bytes(r.resident_bytes, signed=True)),
            nbytes(r.self_resident_bytes, signed=True),
            seconds(r.seconds),
            seconds(r.self_seconds),
            seconds(r.start_seconds),
            text(r.pid),
        ]
        for r in ranked[:_MAX_IMPORT_ROWS]
    ]
    headers = [("package", False)] + [
        (h, True) for h in ("memory", "own memory", "time", "own time", "at", "pid")
    ]
    return Part(
        _CHART.format("chart-imports") + table(headers, body),
        imports_title(import_totals(p)),
        "First import of each top-level package, largest first"
        + (f" ({_MAX_IMPORT_ROWS} of {len(ranked)})" if len(ranked) > _MAX_IMPORT_ROWS else "")
        + "; 'own' leaves out the packages it imported.",
    )


def processes(v: ProfileView) -> Part | None:
    # the document's section, the page's own table in it (30 rows, a process's parent, start and
    # lifetime, sorted by value); 5: the text reports' rows, which the page leaves out
    section = processes_table(v.profile, 5)
    return None if section is None else section_part(section)
