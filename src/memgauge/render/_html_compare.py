"""The HTML page of ``memgauge compare``: the same self-contained frame as the report."""

from __future__ import annotations

import shlex
from typing import Any

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import Comparison, ComparisonRow
from memgauge.render._html_page import Cell, code, esc, page, section, table, text


def _value(row: ComparisonRow, i: int) -> str:
    v = row.values[i]
    if v is None:
        return "—"
    if row.unit == "bytes":
        shown = format_bytes(v)
    elif row.unit == "seconds":
        shown = format_seconds(v)
    else:
        shown = f"{v:g}"
    return shown + (" ≥" if row.is_lower_bound(i) else "")


def _delta(row: ComparisonRow, j: int) -> str:
    d, r = row.deltas[j], row.ratios[j]
    if d is None:
        return ""
    if row.unit == "bytes":
        shown = format_bytes(d, signed=True)
    elif row.unit == "seconds":
        shown = ("+" if d > 0 else "-" if d < 0 else "") + format_seconds(abs(d))
    else:
        shown = f"{d:+g}"
    return shown + (f" · {r:.2f}x" if r is not None else "")


def _cells(row: ComparisonRow) -> list[Cell]:
    cells = [Cell(esc(_value(row, 0)), row.values[0])]
    for j in range(len(row.values) - 1):
        d = row.deltas[j]
        # more memory or time is worse; counts are neither
        tone = "" if d is None or d == 0 or row.unit == "count" else ("bad" if d > 0 else "good")
        delta = _delta(row, j)
        extra = f'<br><small class="{tone}">{esc(delta)}</small>' if delta else ""
        cells.append(Cell(esc(_value(row, j + 1)) + extra, row.values[j + 1]))
    return cells


def _grouped(rows: list[tuple[str, ComparisonRow]]) -> dict[str, Any]:
    """Bar groups for the page script; a figure no profile has (no --alloc) gets no group."""
    kept = [(label, r) for label, r in rows if any(v is not None for v in r.values)]
    return {"labels": [label for label, _ in kept], "values": [list(r.values) for _, r in kept]}


class HtmlComparisonRenderer:
    def render(self, comparison: Comparison) -> str:
        c = comparison
        headers = [("", False)] + [(name, True) for name in c.names]
        runs = table(
            [("", False)] + [(name, False) for name in c.names],
            [
                [text("command"), *(code(shlex.join(cmd)) for cmd in c.commands)],
                [text("exit"), *(text(e) for e in c.exit)],
            ],
        )
        summary = table(headers, [[text(r.label), *_cells(r)] for r in c.summary])
        by_unit = {u: [(r.label, r) for r in c.summary if r.unit == u] for u in ("bytes", "seconds")}
        body = [
            section(
                "summary",
                f"{' vs '.join(c.names)}",
                runs
                + summary
                + '<div class="chart"><canvas id="chart-compare-peaks"></canvas></div>'
                + '<div class="chart"><canvas id="chart-compare-times"></canvas></div>',
                note=f"Deltas and ratios are against the first profile, {c.baseline}.",
            )
        ]
        data: dict[str, Any] = {
            "kind": "comparison",
            "names": list(c.names),
            "peaks": _grouped(by_unit["bytes"]),
            "times": _grouped(by_unit["seconds"]),
        }
        if c.phases:
            rows = []
            for ph in c.phases:
                indent = f'<span class="indent" style="--depth:{ph.depth}"></span>'
                rows.append([Cell(indent + esc(ph.name) + " peak", ph.name), *_cells(ph.peak)])
                rows.append([Cell(indent + esc(ph.name) + " time", ph.name), *_cells(ph.duration)])
                if any(v not in (None, 1) for v in ph.count.values):
                    rows.append([Cell(indent + esc(ph.name) + " count", ph.name), *_cells(ph.count)])
            body.append(
                section(
                    "phases",
                    "phases",
                    '<div class="chart"><canvas id="chart-compare-phases"></canvas></div>'
                    '<div class="chart"><canvas id="chart-compare-phase-times"></canvas></div>'
                    + table(headers, rows),
                    note="Phases matched by name; a name opened several times shows its highest peak and "
                    "its total time.",
                )
            )
            data["phasePeaks"] = _grouped([(ph.name, ph.peak) for ph in c.phases])
            data["phaseTimes"] = _grouped([(ph.name, ph.duration) for ph in c.phases])
        if c.lines:
            line_headers = [("line", False), ("source", False)] + [(name, True) for name in c.names]
            rows = [[code(ln.location), code(ln.source), *_cells(ln.held)] for ln in c.lines]
            body.append(
                section(
                    "lines",
                    "lines holding the resident peak",
                    table(line_headers, rows),
                    note="Matched by file, function and source text, so a line that moved still matches. "
                    "— : not among the lines recorded as holding that profile's peak.",
                )
            )
        if c.notes:
            notes = "".join(f"<li>{esc(n)}</li>" for n in c.notes)
            body.append(section("notes", "notes", f"<ul class=notes>{notes}</ul>"))
        html_body = (
            f"<header><h1>memgauge compare <code>{esc(' vs '.join(c.names))}</code></h1></header>\n"
            f"<main>{''.join(body)}</main>"
        )
        return page(f"memgauge compare: {' vs '.join(c.names)}", html_body, data)
