"""The HTML report of one profile: a single self-contained file (see ``_html_page``).

Tables are rendered here, in Python, so the numbers are readable without JavaScript and testable
as text; the charts are drawn by Chart.js from the data embedded in the page. Everything shown is
capped (rows, series, shaded phases), so a one-hour profile stays a few hundred KB.
"""

from __future__ import annotations

import shlex
from collections import defaultdict
from typing import Any

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import (
    advise,
    exit_text,
    phase_rows,
    phase_totals,
    rollup,
    short_path,
    top_lines,
    top_processes,
)
from memgauge.model import UNBOUNDED_NOTE, PhaseRecord, Profile
from memgauge.render._html_page import (
    Cell,
    code,
    esc,
    heat,
    nbytes,
    page,
    seconds,
    section,
    share,
    split,
    table,
    text,
)

_MAX_SERIES = 8  # per-process memory lines drawn besides the tree total
_MAX_SHADED = 200  # phase spans shaded on the memory chart
_MAX_PHASE_ROWS = 150
_MAX_PHASE_BARS = 20  # phase names on the share-of-wall-time chart (220 px high)
_MAX_PROCESS_ROWS = 30
_MAX_IMPORT_ROWS = 30
# the sampled sum counts a page shared by two processes twice, so it may run above the cgroup
_TREE_LABEL = "sum of processes (shared pages in each)"


def peak_bound(profile: Profile) -> str:
    peak = profile.peak
    if UNBOUNDED_NOTE in peak.notes:
        return "a lower bound"
    if peak.error_bound_bytes:
        return f"±{format_bytes(peak.error_bound_bytes)}"
    return "exact"


class HtmlRenderer:
    def __init__(self, cwd: str | None = None, max_lines: int = 100) -> None:
        self.cwd = cwd
        self.max_lines = max_lines

    def render(self, profile: Profile) -> str:
        command = shlex.join(profile.command)
        advice_html = self._advice(profile)
        sections = [
            self._summary(profile),
            advice_html,
            self._charts(profile),
            self._phases(profile),
            self._attribution(profile),
            self._allocation(profile),
            self._lines(profile),
            self._rollups(profile),
            self._leaks(profile),
            self._imports(profile),
            self._processes(profile),
            self._environment(profile),
        ]
        nav = "".join(
            f'<a href="#{a}">{esc(t)}</a>'
            for a, t in (
                ("advice", "advice"),
                ("memory", "memory"),
                ("phases", "phases"),
                ("peak", "peak"),
                ("lines", "lines"),
                ("rollups", "functions & files"),
                ("leaks", "leaks"),
                ("imports", "imports"),
                ("processes", "processes"),
                ("environment", "environment"),
            )
            if any(f'<section id="{a}"' in s for s in sections)
        )
        body = (
            f"<header><h1>memgauge <code>{esc(command)}</code></h1><nav>{nav}</nav></header>\n"
            f"<main>{''.join(sections)}</main>\n"
            f"<footer>memgauge {esc(profile.memgauge_version)} · profile schema {profile.schema_version}"
            f"{' · started ' + esc(profile.started_at) if profile.started_at else ''}</footer>"
        )
        return page(f"memgauge: {command}", body, self._data(profile))

    # -- sections -------------------------------------------------------------------------------

    def _where(self, file: str, line: int) -> str:
        return f"{short_path(file, self.cwd)}:{line}" if line else file

    def _summary(self, p: Profile) -> str:
        words, cls = exit_text(p)
        cpu = p.cpu.user_seconds + p.cpu.system_seconds
        cards = [
            ("resident peak", format_bytes(p.peak.resident_bytes), peak_bound(p), "peak"),
            ("wall time", format_seconds(p.wall_seconds), words, cls),
            (
                "CPU time",
                format_seconds(cpu),
                f"{cpu / p.wall_seconds:.0%} of one core" if p.wall_seconds > 0 else "",
                "",
            ),
        ]
        if p.allocation_peak is not None:
            cards.append(("allocation peak", format_bytes(p.allocation_peak.bytes), "live heap (memray)", ""))
        if len(p.processes) > 1:
            cards.append(
                (
                    "largest process",
                    format_bytes(p.peak.largest_process_bytes),
                    f"of {len(p.processes)} processes",
                    "",
                )
            )
        html_cards = "".join(
            f'<div class="card {cls}"><div class="label">{esc(label)}</div>'
            f'<div class="value">{esc(value)}</div><div class="sub">{esc(sub)}</div></div>'
            for label, value, sub, cls in cards
        )
        how = f"measured by {p.peak.method}"
        if p.peak.includes_page_cache:
            how += ", page cache included"
        if p.peak.at_seconds is not None:
            how += f"; reached at {format_seconds(p.peak.at_seconds)}"
        notes = "".join(f"<li>{esc(n)}</li>" for n in p.peak.notes)
        return (
            f'<section id="summary"><div class="cards">{html_cards}</div>'
            f'<p class="note">{esc(how)}</p>{f"<ul class=notes>{notes}</ul>" if notes else ""}</section>\n'
        )

    def _advice(self, p: Profile) -> str:
        items = advise(p, self.cwd)
        if not items:
            return ""
        out = []
        for a in items:
            evidence = "".join(f"<tr><th>{esc(e.label)}</th><td>{esc(e.value)}</td></tr>" for e in a.evidence)
            where = f" <code>{esc(a.where)}</code>" if a.where else ""
            out.append(
                f'<div class="advice" data-kind="{esc(a.kind)}"><h3>{esc(a.title)}{where}</h3>'
                f'<table class="evidence">{evidence}</table><p>{esc(a.detail)}</p></div>'
            )
        return section(
            "advice", "advice", "".join(out), note="Each piece of advice shows the figures it rests on."
        )

    def _charts(self, p: Profile) -> str:
        tl = p.timeline
        if not tl.t_seconds:
            return ""
        # one sample (or CPU times not recorded) gives no rate: no empty box where the chart was
        rates, _ = _cpu_rate(tl.t_seconds, tl.cpu_user_seconds, tl.cpu_system_seconds, p.wall_seconds)
        cpu = '<div class="chart"><canvas id="chart-cpu"></canvas></div>' if rates else ""
        return section(
            "memory",
            "memory and CPU over time" if rates else "memory over time",
            '<div class="chart tall"><canvas id="chart-memory"></canvas></div>' + cpu,
            note="Resident memory of the process tree and of its largest processes; shaded bands are "
            "phases; the triangle marks the peak. Each point is the maximum of the samples it covers.",
        )

    def _phases(self, p: Profile) -> str:
        rows = phase_rows(p)
        if not rows:
            return ""
        chart = '<div class="chart"><canvas id="chart-phases"></canvas></div>'
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
                        esc(format_bytes(r.phase.peak_resident_bytes) + ("" if r.phase.peak_exact else " ≥")),
                        r.phase.peak_resident_bytes,
                    ),
                    nbytes(r.growth_bytes, signed=True),
                ]
                for r in rows
            ]
            headers = [
                ("phase", False),
                ("pid", True),
                ("start", True),
                ("duration", True),
                ("share", True),
                ("peak", True),
                ("growth", True),
            ]
            return section("phases", "phases", chart + table(headers, body))
        totals = phase_totals(p)
        # distinct names (one per batch) would list every record again: the longest are kept
        shown = sorted(totals, key=lambda t: -t.seconds)[:_MAX_PHASE_ROWS]
        body = [
            [
                text(t.name),
                Cell(esc(str(t.count)), t.count),
                seconds(t.seconds),
                share(t.seconds, p.wall_seconds),
                Cell(esc(format_bytes(t.peak_bytes) + (" ≥" if t.lower_bound else "")), t.peak_bytes),
            ]
            for t in shown
        ]
        headers = [
            ("phase", False),
            ("count", True),
            ("total time", True),
            ("share", True),
            ("max peak", True),
        ]
        return section(
            "phases",
            "phases",
            chart + table(headers, body),
            note=f"{len(rows)} phase records, summed by name"
            + (
                f"; the {len(shown)} of {len(totals)} names with the most time."
                if len(totals) > len(shown)
                else "."
            ),
        )

    def _attribution(self, p: Profile) -> str:
        entries = p.peak.attribution[: self.max_lines]
        if not entries:
            return ""
        top = max(a.bytes for a in entries)
        multi = len(p.processes) > 1
        body = []
        for a in entries:
            stack = "".join(f"<li><code>{esc(self._stack_frame(f))}</code></li>" for f in a.stack)
            where = code(self._where(a.file, a.line))
            if stack:
                where = Cell(
                    f"<details><summary>{where.html}</summary><ol class=stack>{stack}</ol></details>",
                    where.sort,
                )
            row = [heat(a.bytes, top, format_bytes(a.bytes)), share(a.bytes, p.peak.resident_bytes)]
            row += [text(a.pid)] if multi else []
            row += [where, text(a.function), code(a.source)]
            body.append(row)
        headers = [("held", True), ("of peak", True)] + ([("pid", True)] if multi else [])
        headers += [("line", False), ("function", False), ("source", False)]
        return section(
            "peak",
            "resident peak held by",
            table(headers, body),
            note="Sampled: the resident memory each line had added, and not yet given back, at each "
            "process's highest sample. Open a line for its callers.",
        )

    def _stack_frame(self, frame: str) -> str:
        file, _, line = frame.rpartition(":")
        return self._where(file, int(line)) if file and line.isdigit() else frame

    def _allocation(self, p: Profile) -> str:
        alloc = p.allocation_peak
        if alloc is None:
            return ""
        entries = alloc.attribution[: self.max_lines]
        top = max((a.bytes for a in entries), default=0)
        body = [
            [
                heat(a.bytes, top, format_bytes(a.bytes)),
                share(a.bytes, alloc.bytes),
                text(a.pid),
                code(self._where(a.file, a.line)),
                text(a.function),
                code(a.source),
            ]
            for a in entries
        ]
        headers = [
            ("live", True),
            ("of peak", True),
            ("pid", True),
            ("line", False),
            ("function", False),
            ("source", False),
        ]
        rec = []
        for r in p.reconciliation:
            notes = "".join(f"<li>{esc(n)}</li>" for n in r.notes)
            rec.append(
                f'<p class="reconcile">process {r.pid}: '
                f"peak <b>{esc(format_bytes(r.resident_peak_bytes))}</b>"
                f" = baseline {esc(format_bytes(r.baseline_bytes))}"
                f" + allocations {esc(format_bytes(r.allocation_peak_bytes))}"
                f" - never written {esc(format_bytes(r.untouched_bytes))}"
                f" + other {esc(format_bytes(r.other_bytes))}</p>"
                + (f"<ul class=notes>{notes}</ul>" if notes else "")
            )
        return section(
            "allocation",
            f"allocation peak {format_bytes(alloc.bytes)}, live at it",
            table(headers, body) + "".join(rec),
            note="From memray: heap allocations alive at each process's allocation peak.",
        )

    def _lines(self, p: Profile) -> str:
        rows = top_lines(p, self.max_lines)
        if not rows:
            return ""
        multi = len(p.processes) > 1
        top_t = max(r.total_seconds for r in rows)
        top_m = max(abs(r.stats.resident_growth_bytes) for r in rows)
        held = {(a.pid, a.file, a.line): a.bytes for a in p.peak.attribution}
        body = []
        for r in rows:
            s = r.stats
            row = [
                heat(r.total_seconds, top_t, format_seconds(r.total_seconds)),
                split(s.cpu_python_seconds, s.cpu_native_seconds, s.wait_seconds),
                seconds(s.cpu_python_seconds + s.cpu_native_seconds),
                heat(
                    s.resident_growth_bytes,
                    top_m,
                    format_bytes(s.resident_growth_bytes, signed=True),
                    negative=s.resident_growth_bytes < 0,
                ),
                nbytes(held.get((s.pid, s.file, s.line))),
            ]
            row += [text(s.pid)] if multi else []
            row += [code(self._where(s.file, s.line)), text(s.function), code(s.source)]
            body.append(row)
        headers = [
            ("time", True),
            ("Python / native / wait", True),
            ("CPU", True),
            ("memory", True),
            ("held at peak", True),
        ]
        headers += [("pid", True)] if multi else []
        headers += [("line", False), ("function", False), ("source", False)]
        shown = f"{len(rows)} of {len(p.lines)} lines" if len(p.lines) > len(rows) else f"{len(rows)} lines"
        return section(
            "lines",
            "time and memory by line",
            table(headers, body),
            note=f"Sampled; {shown}, most time first. Time is summed over threads; native is C code "
            "(numpy, torch); memory is the net resident change while the line ran.",
        )

    def _rollups(self, p: Profile) -> str:
        if not p.lines:
            return ""
        parts = []
        for by, title in (("function", "by function"), ("file", "by file")):
            rows = rollup(p, by)[: self.max_lines]
            top = max((r.total_seconds for r in rows), default=0.0)
            body = []
            for r in rows:
                name = [code(short_path(r.file, self.cwd))]
                if by == "function":
                    name.append(text(r.function))
                body.append(
                    [
                        heat(r.total_seconds, top, format_seconds(r.total_seconds)),
                        split(r.cpu_python_seconds, r.cpu_native_seconds, r.wait_seconds),
                        nbytes(r.resident_growth_bytes, signed=True),
                        nbytes(r.peak_bytes or None),
                        text(r.lines),
                        *name,
                    ]
                )
            headers = [
                ("time", True),
                ("Python / native / wait", True),
                ("memory", True),
                ("held at peak", True),
                ("lines", True),
                ("file", False),
            ]
            if by == "function":
                headers.append(("function", False))
            parts.append(f"<h3>{esc(title)}</h3>" + table(headers, body))
        return section("rollups", "functions and files", "".join(parts))

    def _leaks(self, p: Profile) -> str:
        if not p.leaks:
            return ""
        body = [
            [
                # sorted by the rate, not by the number before its unit
                Cell(esc(f"{format_bytes(round(x.rate_bytes_per_second))}/s"), x.rate_bytes_per_second),
                nbytes(x.retained_bytes),
                seconds(x.first_seconds),
                text(f"{x.fit_r2:.3f}"),
                text(x.pid),
                code(self._where(x.file, x.line)),
                code(x.source),
            ]
            for x in p.leaks[: self.max_lines]
        ]
        headers = [
            ("rate", True),
            ("retained", True),
            ("since", True),
            ("fit R²", True),
            ("pid", True),
            ("line", False),
            ("source", False),
        ]
        return section(
            "leaks",
            "leak suspects",
            table(headers, body),
            note="Lines whose retained memory grew steadily, without release, until the end of the run.",
        )

    def _imports(self, p: Profile) -> str:
        if not p.imports:
            return ""
        ranked = sorted(p.imports, key=lambda r: (-r.resident_bytes, -r.seconds))
        total_t = sum(r.self_seconds for r in p.imports)
        total_b = sum(r.self_resident_bytes for r in p.imports)
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
        headers = [
            ("package", False),
            ("memory", True),
            ("own memory", True),
            ("time", True),
            ("own time", True),
            ("at", True),
            ("pid", True),
        ]
        return section(
            "imports",
            f"imports: {format_seconds(total_t)}, {format_bytes(total_b, signed=True)} in all",
            '<div class="chart"><canvas id="chart-imports"></canvas></div>' + table(headers, body),
            note="First import of each top-level package, largest first"
            + (f" ({_MAX_IMPORT_ROWS} of {len(ranked)})" if len(ranked) > _MAX_IMPORT_ROWS else "")
            + "; 'own' leaves out the packages it imported.",
        )

    def _processes(self, p: Profile) -> str:
        if len(p.processes) <= 1:
            return ""
        shown = top_processes(p, _MAX_PROCESS_ROWS)
        body = [
            [
                text(x.pid),
                Cell('<span class="na">—</span>', None) if x.ppid is None else text(x.ppid),
                Cell(
                    esc(format_bytes(x.peak_resident_bytes)) + ("" if x.peak_exact else " ≥"),
                    x.peak_resident_bytes,
                ),
                seconds(x.cpu_user_seconds + x.cpu_system_seconds),
                seconds(x.start_seconds),
                seconds(None if x.end_seconds is None else x.end_seconds - x.start_seconds),
                code(shlex.join(x.cmdline) if x.cmdline else "(unknown)"),
            ]
            for x in shown
        ]
        headers = [
            ("pid", True),
            ("parent", True),
            ("peak", True),
            ("CPU", True),
            ("start", True),
            ("lived", True),
            ("command", False),
        ]
        return section(
            "processes", f"processes ({len(shown)} of {len(p.processes)}, by peak)", table(headers, body)
        )

    def _environment(self, p: Profile) -> str:
        if not p.environment:
            return ""
        rows = []
        for key, value in _flatten(p.environment):
            if key.endswith("_bytes") and isinstance(value, int):
                shown = format_bytes(value)
            else:
                shown = "—" if value is None else str(value)
            rows.append([code(key), text(shown)])
        return section("environment", "environment", table([("key", False), ("value", False)], rows))

    # -- chart data ------------------------------------------------------------------------------

    def _data(self, p: Profile) -> dict[str, Any]:
        tl = p.timeline
        t = [round(x, 3) for x in tl.t_seconds]
        series: list[dict[str, Any]] = []
        if tl.cgroup_bytes:
            series.append({"label": "cgroup (page cache included)", "start": 0, "values": tl.cgroup_bytes})
        if tl.tree_resident_bytes:
            series.append({"label": _TREE_LABEL, "start": 0, "values": tl.tree_resident_bytes})
        if len(tl.processes) > 1:
            peaks: dict[int, int] = defaultdict(int)
            for s in tl.processes:
                peaks[s.pid] = max(peaks[s.pid], max(s.resident_bytes, default=0))
            keep = set(sorted(peaks, key=lambda pid: -peaks[pid])[:_MAX_SERIES])
            names = {x.pid: _short_command(x.cmdline) for x in p.processes}
            for s in tl.processes:
                if s.pid in keep and s.resident_bytes:
                    label = f"{s.pid} {names.get(s.pid, '')}".strip()
                    series.append({"label": label, "start": s.start_index, "values": s.resident_bytes})
        cpu_t, cores = _cpu_rate(tl.t_seconds, tl.cpu_user_seconds, tl.cpu_system_seconds, p.wall_seconds)
        # the names with the most time, in the order they first started: bars stay readable
        longest = {t.name for t in sorted(phase_totals(p), key=lambda t: -t.seconds)[:_MAX_PHASE_BARS]}
        totals = [t for t in phase_totals(p) if t.name in longest]
        imports = sorted(p.imports, key=lambda r: -r.self_resident_bytes)[:15]
        return {
            "kind": "profile",
            "wall": p.wall_seconds,
            "memory": {
                "t": t,
                "series": series,
                "peak": None
                if p.peak.at_seconds is None
                else {"t": round(p.peak.at_seconds, 3), "bytes": p.peak.resident_bytes},
                "phases": _shaded(p.phases),
            },
            "cpu": {"t": cpu_t, "cores": cores},
            "phases": {
                "labels": [t.name for t in totals],
                "seconds": [round(t.seconds, 4) for t in totals],
                "peaks": [t.peak_bytes for t in totals],
            },
            "imports": {
                "labels": [r.package for r in imports],
                "bytes": [r.self_resident_bytes for r in imports],
                "seconds": [round(r.self_seconds, 4) for r in imports],
            },
        }


def _cpu_rate(
    t: list[float], user: list[float], system: list[float], wall: float
) -> tuple[list[float], list[float]]:
    """Cores busy over windows of at least 50 ms (and 1/300 of the run): CPU clocks tick every
    10 ms, so a rate over one 10 ms sample is 0 or 2 cores, never the truth."""
    window = max(0.05, wall / 300)
    total = [u + s for u, s in zip(user, system, strict=False)]
    out_t: list[float] = []
    cores: list[float] = []
    last = 0
    for i in range(1, len(total)):
        dt = t[i] - t[last]
        if dt >= window or i == len(total) - 1:
            if dt > 0:
                out_t.append(round(t[last], 3))
                cores.append(round(max(0.0, total[i] - total[last]) / dt, 3))
            last = i
    if out_t:  # the last window's rate holds until its end
        out_t.append(round(t[-1], 3))
        cores.append(cores[-1])
    return out_t, cores


def _short_command(cmdline: list[str]) -> str:
    shown = " ".join(a.rsplit("/", 1)[-1] if i == 0 else a for i, a in enumerate(cmdline[:3]))
    return shown[:40]


def _shaded(phases: list[PhaseRecord]) -> list[dict[str, Any]]:
    """The outermost phases as spans to shade. Beyond _MAX_SHADED, runs of one name merge into
    one span, then the longest spans are kept: the chart shows the shape, the table the detail."""
    top = sorted((ph for ph in phases if ph.depth == 0), key=lambda x: x.start_seconds)
    spans = [(ph.name, ph.start_seconds, ph.end_seconds) for ph in top]
    if len(spans) > _MAX_SHADED:
        merged: list[tuple[str, float, float]] = []
        for name, start, end in spans:
            if merged and merged[-1][0] == name:
                merged[-1] = (name, merged[-1][1], max(merged[-1][2], end))
            else:
                merged.append((name, start, end))
        longest = sorted(merged, key=lambda s: s[1] - s[2])[:_MAX_SHADED]
        spans = sorted(longest, key=lambda s: s[1])
    return [{"name": n, "start": round(s, 3), "end": round(e, 3)} for n, s, e in spans]


def _flatten(data: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out += _flatten(value, name + ".")
        else:
            out.append((name, value))
    return out
