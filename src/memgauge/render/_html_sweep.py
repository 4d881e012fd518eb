"""The HTML page of ``memgauge sweep``: the same self-contained, offline frame as the run report.

The tables are the terminal report's, sortable; the charts (``_html_sweep_charts``) are drawn by
the page script from the embedded data. Charts and rows are capped so that a large sweep still
makes a page that opens at once.

The page's sections are registered in ``SECTIONS``, in page order: a new section is a function
from a ``SweepView`` to a ``Part`` (or None when it has nothing to show), registered there with
its anchor and the text of its link in the nav.
"""

from __future__ import annotations

import shlex
from typing import Any

from memgauge.analysis import (
    SweepAnalysis,
    exit_summary,
    is_numeric,
    points_measured,
    run_metrics,
    share_rows,
    top_phases,
)
from memgauge.model import SWEEP, SweepResult
from memgauge.render._format import DASH, esc, format_number, percent
from memgauge.render._html_page import NA, Cell, Part, Sections, capped, cards, items, nbytes, page, seconds
from memgauge.render._html_sweep_charts import KINDS, MAX_CHARTS, canvases, charts
from memgauge.render._html_sweep_fits import SweepView, budget, growth, metric_cell, param_cell, predictions
from memgauge.render._sweep_json import finite
from memgauge.render._sweep_words import KNEE_NOTE, fixed_text, format_metric, format_range, format_value

_MAX_ROWS = 50


def _summary(v: SweepView) -> Part:
    r = v.analysis.result
    measured, total = points_measured(r)
    # every run, the confirming ones too: the law table's "runs" counts them as well
    every = [run for p in r.points for run in p.runs] + [c.run for c in r.confirmations]
    failed = sum(1 for run in every if not run.ok)
    confirming = f" ({len(r.confirmations)} confirming)" if r.confirmations else ""
    entries = [
        ("points", f"{measured} of {total}", "complete" if r.complete else "interrupted",
         "good" if r.complete else "bad"),
        ("runs", str(len(every)), (f"{failed} failed" if failed else "all ok") + confirming,
         "bad" if failed else "good"),
        ("repeat", str(r.repeat), "runs per point", ""),
        ("engine", r.engine, f"{r.concurrency} at a time" if r.concurrency else "", ""),
    ]  # fmt: skip
    params = "".join(
        f"<li><code>{esc(name)}</code>: {esc(', '.join(format_value(x) for x in values))}</li>"
        for name, values in r.params.items()
    )
    return Part(f'<div class="cards">{cards(entries)}</div><ul>{params}</ul>')


def _param_headers(r: SweepResult) -> tuple[list[str], list[tuple[str, bool]]]:
    varied = r.varied() or list(r.params)
    return varied, [(name, is_numeric(r.params[name])) for name in varied]


def _points(v: SweepView) -> Part | None:
    r = v.analysis.result
    if not r.points:
        return None
    varied, headers = _param_headers(r)
    metrics = run_metrics(r)
    headers = [*headers, ("peak", True)]
    if r.repeat > 1:
        headers.append((f"peak min{DASH}max", True))
    headers += [("wall", True), ("CPU", True), ("exit", False)]
    headers += [(m, True) for m in metrics]
    body = []
    for p in r.points:
        cells = [param_cell(p.params.get(n)) for n in varied]
        cells.append(nbytes(p.median("rss")))
        if r.repeat > 1:
            values = p.values("rss")
            spread = format_range("rss", min(values), max(values)) if len(values) > 1 else ""
            cells.append(Cell(esc(spread), min(values)) if values else NA)
        cells += [seconds(p.median("wall")), seconds(p.median("cpu"))]
        summary = exit_summary(p, r.repeat)
        cls = "" if summary.startswith("ok") else ' class="bad"'
        cells.append(Cell(f"<span{cls}>{esc(summary)}</span>", summary))
        cells += [metric_cell(f"metric:{m}", p.median(f"metric:{m}")) for m in metrics]
        body.append(cells)
    runs = f", medians of {r.repeat} runs" if r.repeat > 1 else ""
    return Part(capped(headers, body, v.max_rows), f"points ({len(r.points)}{runs})")


def _phases(v: SweepView) -> Part | None:
    r = v.analysis.result
    names = top_phases(r)
    if not names:
        return None
    varied, headers = _param_headers(r)
    for name in names:
        headers += [(f"{name} peak", True), (f"{name} time", True)]
    body = []
    for p in r.points:
        cells = [param_cell(p.params.get(n)) for n in varied]
        for name in names:
            cells += [nbytes(p.median(f"phase:{name}.peak")), seconds(p.median(f"phase:{name}.seconds"))]
        body.append(cells)
    return Part(
        capped(headers, body, v.max_rows),
        "phases",
        "The outermost phases of each point: medians of their peaks and of their times.",
    )


def _shares(v: SweepView) -> Part | None:
    shares = v.analysis.shares
    if not shares:
        return None
    parts = [canvases(v.charts["shares"])]
    for s in shares:
        headers = [(s.param, True), *((name, True) for name in s.phases), ("other", True)]
        body = [
            [param_cell(x), *(Cell(esc(percent(f)), f) for f in row), Cell(esc(percent(other)), other)]
            for x, row, other in share_rows(s)
        ]
        where = f" ({fixed_text(s.fixed)})" if s.fixed else ""
        parts.append(f"<h3>{esc(f'by {s.param}{where}')}</h3>" + capped(headers, body, v.max_rows))
    return Part(
        "".join(parts),
        "share of wall time by phase",
        "Each outermost phase's median time as a share of the median wall time; other: time in no phase.",
    )


def _scaling(v: SweepView) -> Part | None:
    rows = v.analysis.scaling
    if not rows:
        return None
    parts = [canvases(v.charts["scaling"])]
    for row in rows:
        sc = row.scaling
        headers = [
            (row.param, True),
            ("throughput", True),
            ("speedup", True),
            ("efficiency", True),
            ("", False),
        ]
        body = []
        for p in sc.points:
            knee = sc.knee is not None and p.workers == sc.knee
            workers = esc(format_number(p.workers))
            body.append(
                [
                    Cell(f"<b>{workers}</b>" if knee else workers, p.workers),
                    Cell(esc(format_metric(f"throughput:{row.metric}", p.throughput)), p.throughput),
                    Cell(f"{p.speedup:.2f}x", p.speedup),
                    Cell(esc(percent(p.efficiency)), p.efficiency),
                    Cell(f'<span class="bad">{esc(KNEE_NOTE)}</span>', "knee") if knee else Cell("", ""),
                ]
            )
        where = f" ({fixed_text(row.fixed)})" if row.fixed else ""
        title = f"{row.metric} per second by {row.param}{where}"
        parts.append(f"<h3>{esc(title)}</h3>" + capped(headers, body, v.max_rows))
    criteria = " ".join(dict.fromkeys(esc(row.scaling.criterion) for row in rows))
    return Part("".join(parts), "worker scaling", criteria)


def _notes(v: SweepView) -> Part | None:
    return Part(items(v.analysis.notes), "notes") if v.analysis.notes else None


SECTIONS: Sections[SweepView] = Sections()
SECTIONS.register("summary", None, _summary)
SECTIONS.register("growth", "growth", growth)
SECTIONS.register("predictions", "predictions", predictions)
SECTIONS.register("budget", "budget", budget)
SECTIONS.register("points", "points", _points)
SECTIONS.register("phases", "phases", _phases)
SECTIONS.register("shares", "phase shares", _shares)
SECTIONS.register("scaling", "scaling", _scaling)
SECTIONS.register("notes", "notes", _notes)


class HtmlSweepRenderer:
    def __init__(self, max_rows: int = _MAX_ROWS, max_charts: int = MAX_CHARTS) -> None:
        self.max_rows = max_rows
        self.max_charts = max_charts

    def render(self, analysis: SweepAnalysis) -> str:
        r = analysis.result
        drawn = charts(analysis, self.max_charts)
        by_kind: dict[str, list[dict[str, Any]]] = {kind: [] for kind in KINDS}
        for chart in drawn:
            by_kind[chart["kind"]].append(chart)
        nav, sections = SECTIONS.build(SweepView(analysis, by_kind, self.max_rows))
        command = shlex.join(r.command)
        footer = f"memgauge {esc(r.memgauge_version)} · sweep record version {SWEEP.version}"
        if r.started_at:
            footer += f" · started {esc(r.started_at)}"
        body = (
            f"<header><h1>memgauge sweep <code>{esc(command)}</code></h1><nav>{nav}</nav></header>\n"
            f"<main>{sections}</main>\n<footer>{footer}</footer>"
        )
        return page(f"memgauge sweep: {command}", body, finite({"kind": "sweep", "charts": drawn}))
