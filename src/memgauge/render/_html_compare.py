"""The HTML page of ``memgauge compare``: the same self-contained frame as the report.

Its sections are registered in ``SECTIONS`` like the report's; the page has no nav (it is short:
a summary, the phases, the lines and the notes)."""

from __future__ import annotations

import shlex
from typing import Any

from memgauge.analysis import Comparison, ComparisonRow, has_values, ran_repeatedly
from memgauge.render._format import esc, format_delta, format_figure, format_ratio
from memgauge.render._html_page import Cell, Part, Sections, code, items, page, table, text
from memgauge.sections import section


def _cells(row: ComparisonRow) -> list[Cell]:
    """The baseline's figure, then each other profile's with its delta and ratio under it."""
    cells = [Cell(esc(format_figure(row.values[0], row.unit, row.is_lower_bound(0))), row.values[0])]
    for j, (d, r) in enumerate(zip(row.deltas, row.ratios, strict=True)):
        # more memory or time is worse; counts are neither
        tone = "" if d is None or d == 0 or row.unit == "count" else ("bad" if d > 0 else "good")
        extra = ""
        if d is not None:
            delta = format_delta(d, row.unit) + (f" · {format_ratio(r)}" if r is not None else "")
            extra = f'<br><small class="{tone}">{esc(delta)}</small>'
        shown = format_figure(row.values[j + 1], row.unit, row.is_lower_bound(j + 1))
        cells.append(Cell(esc(shown) + extra, row.values[j + 1]))
    return cells


def _grouped(rows: list[tuple[str, ComparisonRow]]) -> dict[str, Any]:
    """Bar groups for the page script; a figure no profile has (no --alloc) gets no group."""
    kept = [(label, r) for label, r in rows if has_values(r)]
    return {"labels": [label for label, _ in kept], "values": [list(r.values) for _, r in kept]}


def _headers(c: Comparison) -> list[tuple[str, bool]]:
    return [("", False)] + [(name, True) for name in c.names]


def _summary(c: Comparison) -> Part:
    runs = table(
        [("", False)] + [(name, False) for name in c.names],
        [
            [text("command"), *(code(shlex.join(cmd)) for cmd in c.commands)],
            [text("exit"), *(text(e) for e in c.exit)],
        ],
    )
    summary = table(_headers(c), [[text(r.label), *_cells(r)] for r in c.summary])
    return Part(
        runs
        + summary
        + '<div class="chart"><canvas id="chart-compare-peaks"></canvas></div>'
        + '<div class="chart"><canvas id="chart-compare-times"></canvas></div>',
        " vs ".join(c.names),
        f"Deltas and ratios are against the first profile, {c.baseline}.",
    )


def _phases(c: Comparison) -> Part | None:
    if not c.phases:
        return None
    rows = []
    for ph in c.phases:
        indent = f'<span class="indent" style="--depth:{ph.depth}"></span>'
        rows.append([Cell(indent + esc(ph.name) + " peak", ph.name), *_cells(ph.peak)])
        rows.append([Cell(indent + esc(ph.name) + " time", ph.name), *_cells(ph.duration)])
        if ran_repeatedly(ph.count):
            rows.append([Cell(indent + esc(ph.name) + " count", ph.name), *_cells(ph.count)])
    return Part(
        '<div class="chart"><canvas id="chart-compare-phases"></canvas></div>'
        '<div class="chart"><canvas id="chart-compare-phase-times"></canvas></div>'
        + table(_headers(c), rows),
        "phases",
        "Phases matched by name; a name opened several times shows its highest peak and its total time.",
    )


def _lines(c: Comparison) -> Part | None:
    if not c.lines:
        return None
    headers = [("line", False), ("source", False)] + [(name, True) for name in c.names]
    rows = [[code(ln.location), code(ln.source), *_cells(ln.held)] for ln in c.lines]
    return Part(
        table(headers, rows),
        "lines holding the resident peak",
        "Matched by file, function and source text, so a line that moved still matches. "
        "— : not among the lines recorded as holding that profile's peak.",
    )


def compare_rows_html(c: Comparison, head: str, rows: list[tuple[str, ComparisonRow]]) -> str:
    """A section's figure rows in the comparison's page table: ``head`` names the label column."""
    return table(
        [(head, False)] + [(name, True) for name in c.names], [[text(lb), *_cells(r)] for lb, r in rows]
    )


def compare_chart_data(rows: list[tuple[str, ComparisonRow]]) -> dict[str, Any]:
    """A section's figure rows as the page script's bar groups."""
    return _grouped(rows)


def _section_parts(c: Comparison) -> list[tuple[str, str | None, Part]]:
    """Each section's part of the page, by its "compare_report", in the comparison's order."""
    return [
        (name, None, section(name).part("compare_report").html(c, part)) for name, part in c.sections.items()
    ]


def _notes(c: Comparison) -> Part | None:
    return Part(items(c.notes), "notes") if c.notes else None


SECTIONS: Sections[Comparison] = Sections()
SECTIONS.register("summary", None, _summary)
SECTIONS.register("phases", None, _phases)
SECTIONS.register_group(_section_parts)
SECTIONS.register("lines", None, _lines)
SECTIONS.register("notes", None, _notes)


def _data(c: Comparison) -> dict[str, Any]:
    by_unit = {u: [(r.label, r) for r in c.summary if r.unit == u] for u in ("bytes", "seconds")}
    data: dict[str, Any] = {
        "kind": "comparison",
        "names": list(c.names),
        "peaks": _grouped(by_unit["bytes"]),
        "times": _grouped(by_unit["seconds"]),
    }
    if c.phases:
        data["phasePeaks"] = _grouped([(ph.name, ph.peak) for ph in c.phases])
        data["phaseTimes"] = _grouped([(ph.name, ph.duration) for ph in c.phases])
    for name, part in c.sections.items():
        data.update(getattr(section(name).part("compare_report"), "page_data", lambda _: {})(part))
    return data


class HtmlComparisonRenderer:
    def render(self, comparison: Comparison) -> str:
        c = comparison
        _, sections = SECTIONS.build(c)
        body = f"<header><h1>memgauge compare <code>{esc(' vs '.join(c.names))}</code></h1></header>\n"
        body += f"<main>{sections}</main>"
        return page(f"memgauge compare: {' vs '.join(c.names)}", body, _data(c))
