"""The HTML page of ``memgauge sweep``: the same self-contained, offline frame as the run report.

The tables are the terminal report's, sortable; the charts are drawn by the page script from the
embedded data: each metric against each size (every run, the fitted law, the prediction with its
interval), the phases' shares of the wall time, and the worker scaling against the ideal. Charts
and rows are capped so that a large sweep still makes a page that opens at once.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Sequence
from typing import Any

from memgauge.analysis import (
    BudgetRow,
    Fit,
    GrowthRow,
    PhaseShares,
    Prediction,
    PredictionRow,
    ScalingRow,
    SweepAnalysis,
    is_numeric,
    series,
    sizes,
)
from memgauge.model import SweepResult, Value
from memgauge.render._html_page import Cell, code, esc, nbytes, page, seconds, section, table, text
from memgauge.render._sweep_json import finite
from memgauge.render._sweep_terminal import (
    DASH,
    KNEE_NOTE,
    exit_summary,
    fixed_text,
    format_metric,
    format_number,
    format_range,
    format_size,
    format_value,
    formula,
    metric_label,
    metric_unit,
    percent,
    point_text,
    points_measured,
    runner_up,
    share_rows,
    top_phases,
)

_MAX_CHARTS = 12
_MAX_SERIES = 6  # combinations of the other parameters drawn on one growth chart
_MAX_ROWS = 50
_FIT_SAMPLES = 40
# both ends of an axis further apart than this: a log axis, or the small sizes crowd at zero
_LOG_SPAN = 10.0
_NA = Cell('<span class="na">—</span>', None)
_GRID = (
    '<div class="charts" style="display:grid;grid-template-columns:repeat(auto-fill,minmax(460px,1fr));'
    'gap:4px 24px">'
)


def _capped(headers: Sequence[tuple[str, bool]], rows: Sequence[Sequence[Cell]], limit: int) -> str:
    """The first ``limit`` rows, and how many more there are; a column empty in every row (no
    other parameter to hold fixed, no note) is left out."""
    keep = [i for i in range(len(headers)) if any(row[i].html for row in rows)] if rows else []
    headers = [headers[i] for i in keep]
    rows = [[row[i] for i in keep] for row in rows]
    html = table(headers, rows[:limit])
    if len(rows) > limit:
        html += f'<p class="note">{len(rows) - limit} more rows not shown.</p>'
    return html


def _param_cell(value: Value | None) -> Cell:
    if value is None:
        return _NA
    sort: float | str = float(value) if isinstance(value, (int, float)) else str(value)
    return Cell(esc(format_value(value)), sort)


def _metric_cell(metric: str, value: float | None) -> Cell:
    if value is None or not math.isfinite(value):
        return _NA
    return Cell(esc(format_metric(metric, value)), value)


def _log_spaced(lo: float, hi: float, n: int) -> list[float]:
    if hi <= lo:
        return [lo]
    if lo > 0:
        return [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)]
    return [lo + (hi - lo) * i / (n - 1) for i in range(n)]


def _wide(values: Sequence[float]) -> bool:
    """Positive and spanning more than ``_LOG_SPAN``: worth a log axis."""
    return bool(values) and min(values) > 0 and max(values) / min(values) > _LOG_SPAN


def _sample(fit: Fit, xs: Sequence[float]) -> list[list[float]]:
    out: list[list[float]] = []
    for x in xs:
        try:
            y = fit.predict(x)
        except ValueError:  # outside the law's domain (N < 0 for a power law)
            continue
        if math.isfinite(y):
            out.append([x, y])
    return out


class HtmlSweepRenderer:
    def __init__(self, max_rows: int = _MAX_ROWS, max_charts: int = _MAX_CHARTS) -> None:
        self.max_rows = max_rows
        self.max_charts = max_charts

    def render(self, analysis: SweepAnalysis) -> str:
        a = analysis
        r = a.result
        charts = self._charts(a)
        by_kind: dict[str, list[dict[str, Any]]] = {"growth": [], "shares": [], "scaling": []}
        for chart in charts:
            by_kind[chart["kind"]].append(chart)
        sections = [
            self._summary(r),
            self._growth(a, by_kind["growth"]),
            self._predictions(a.predictions),
            self._budget(a),
            self._points(r),
            self._phases(r),
            self._shares(a.shares, by_kind["shares"]),
            self._scaling(a.scaling, by_kind["scaling"]),
            self._notes(a.notes),
        ]
        nav = "".join(
            f'<a href="#{anchor}">{esc(title)}</a>'
            for anchor, title in (
                ("growth", "growth"),
                ("predictions", "predictions"),
                ("budget", "budget"),
                ("points", "points"),
                ("phases", "phases"),
                ("shares", "phase shares"),
                ("scaling", "scaling"),
                ("notes", "notes"),
            )
            if any(f'<section id="{anchor}"' in s for s in sections)
        )
        command = shlex.join(r.command)
        footer = f"memgauge {esc(r.memgauge_version)} · sweep record format {r.format}"
        if r.started_at:
            footer += f" · started {esc(r.started_at)}"
        body = (
            f"<header><h1>memgauge sweep <code>{esc(command)}</code></h1><nav>{nav}</nav></header>\n"
            f"<main>{''.join(sections)}</main>\n<footer>{footer}</footer>"
        )
        data = {"kind": "sweep", "charts": charts}
        return page(f"memgauge sweep: {command}", body, finite(data))

    # -- chart data ------------------------------------------------------------------------------

    def _charts(self, a: SweepAnalysis) -> list[dict[str, Any]]:
        """The charts worth drawing, most useful first, at most ``max_charts``: the resident peak
        and the wall time against each size, the worker scaling, the phase shares, then each
        phase's peak."""
        r = a.result
        params = sizes(r)
        planned: list[dict[str, Any] | None] = []
        planned += [self._growth_chart(a, m, p) for p in params for m in ("rss", "wall")]
        planned += [self._scaling_chart(row) for row in a.scaling]
        planned += [self._shares_chart(s) for s in a.shares]
        phases = top_phases(r)
        planned += [self._growth_chart(a, f"phase:{name}.peak", p) for p in params for name in phases]
        charts = [c for c in planned if c is not None][: self.max_charts]
        # numbered in the order the page shows them: growth, then shares, then scaling
        order = ("growth", "shares", "scaling")
        charts.sort(key=lambda c: order.index(c["kind"]))
        for i, chart in enumerate(charts):
            chart["id"] = f"chart-sweep-{i}"
        return charts

    def _growth_chart(self, a: SweepAnalysis, metric: str, param: str) -> dict[str, Any] | None:
        runs = series(a.result, metric, param)[:_MAX_SERIES]
        if not runs:
            return None
        out: list[dict[str, Any]] = []
        every_x: list[float] = []
        every_y: list[float] = []
        for s in runs:
            law = next(
                (g for g in a.laws if g.metric == metric and g.param == param and g.fixed == s.fixed), None
            )
            pred = next(
                (p for p in a.predictions if p.metric == metric and p.param == param and p.fixed == s.fixed),
                None,
            )
            p = pred.prediction if pred is not None else None
            top = max(*s.xs, p.x if p is not None else -math.inf)
            fit: list[list[float]] = []
            if law is not None and law.growth is not None:
                fit = _sample(law.growth.best, _log_spaced(min(s.xs), top, _FIT_SAMPLES))
            every_x += list(s.xs) + [x for x, _ in fit]
            every_y += list(s.ys) + [y for _, y in fit]
            predicted: dict[str, Any] | None = None
            if p is not None:
                every_x.append(p.x)
                every_y.append(p.value)
                bounded = math.isfinite(p.low) and math.isfinite(p.high)
                if bounded:
                    every_y.append(p.high)
                predicted = {
                    "x": p.x,
                    "value": p.value,
                    "low": p.low if bounded else None,
                    "high": p.high if bounded else None,
                    "supported": p.supported,
                    "text": self._prediction_text(metric, p),
                }
            out.append(
                {
                    "label": fixed_text(s.fixed) or metric_label(metric),
                    "runs": [[x, y] for x, y in zip(s.xs, s.ys, strict=True)],
                    "fit": fit,
                    "law": law.growth.best.law if law is not None and law.growth is not None else None,
                    "prediction": predicted,
                }
            )
        log_y = _wide(every_y)
        if log_y:
            # a log axis has no zero: an interval reaching below it is drawn to the axis's bottom
            floor = min(y for y in every_y if y > 0) / 2
            for entry in out:
                pred_entry = entry["prediction"]
                if pred_entry is not None and pred_entry["low"] is not None and pred_entry["low"] <= 0:
                    pred_entry["low"] = floor
        return {
            "kind": "growth",
            "title": f"{metric_label(metric)} vs {param}",
            "yTitle": metric_label(metric),
            "metric": metric,
            "unit": metric_unit(metric),
            "param": param,
            "logX": _wide(every_x),
            "logY": log_y,
            "series": out,
        }

    @staticmethod
    def _prediction_text(metric: str, p: Prediction) -> str:
        shown = f"{format_metric(metric, p.value)} ({format_range(metric, p.low, p.high)})"
        return shown if p.supported else f"({shown}) not supported: {p.reason}"

    @staticmethod
    def _shares_chart(s: PhaseShares) -> dict[str, Any]:
        where = f" ({fixed_text(s.fixed)})" if s.fixed else ""
        rows = share_rows(s)
        return {
            "kind": "shares",
            "title": f"share of wall time by phase vs {s.param}{where}",
            "param": s.param,
            "labels": [format_value(x) for x, _, _ in rows],
            "phases": list(s.phases),
            "values": [[100 * row[i] for _, row, _ in rows] for i in range(len(s.phases))],
            "other": [100 * other for _, _, other in rows],
        }

    @staticmethod
    def _scaling_chart(row: ScalingRow) -> dict[str, Any]:
        sc = row.scaling
        where = f" ({fixed_text(row.fixed)})" if row.fixed else ""
        workers = [p.workers for p in sc.points]
        return {
            "kind": "scaling",
            "title": f"speedup vs {row.param}{where}",
            "param": row.param,
            "metric": row.metric,
            "workers": workers,
            "speedup": [p.speedup for p in sc.points],
            "throughput": [p.throughput for p in sc.points],
            "knee": sc.knee,
            "logX": _wide(workers),
        }

    @staticmethod
    def _canvases(charts: Sequence[dict[str, Any]]) -> str:
        if not charts:
            return ""
        return (
            _GRID
            + "".join(
                f'<figure style="margin:0"><h3>{esc(c["title"])}</h3>'
                f'<div class="chart{" tall" if c["kind"] == "growth" else ""}">'
                f'<canvas id="{esc(c["id"])}"></canvas></div></figure>'
                for c in charts
            )
            + "</div>"
        )

    # -- sections --------------------------------------------------------------------------------

    def _summary(self, r: SweepResult) -> str:
        measured, total = points_measured(r)
        runs = sum(len(p.runs) for p in r.points)
        failed = sum(1 for p in r.points for run in p.runs if not run.ok)
        engine = r.engine
        cards = [
            ("points", f"{measured} of {total}", "complete" if r.complete else "interrupted",
             "good" if r.complete else "bad"),
            ("runs", str(runs), f"{failed} failed" if failed else "all ok", "bad" if failed else "good"),
            ("repeat", str(r.repeat), "runs per point", ""),
            ("engine", engine, f"{r.concurrency} at a time" if r.concurrency else "", ""),
        ]  # fmt: skip
        html_cards = "".join(
            f'<div class="card {cls}"><div class="label">{esc(label)}</div>'
            f'<div class="value">{esc(value)}</div><div class="sub">{esc(sub)}</div></div>'
            for label, value, sub, cls in cards
        )
        params = "".join(
            f"<li><code>{esc(name)}</code>: {esc(', '.join(format_value(v) for v in values))}</li>"
            for name, values in r.params.items()
        )
        return f'<section id="summary"><div class="cards">{html_cards}</div><ul>{params}</ul></section>\n'

    def _growth(self, a: SweepAnalysis, charts: Sequence[dict[str, Any]]) -> str:
        rows = a.laws
        if not rows and not charts:
            return ""
        headers = [
            ("metric", False),
            ("vs", False),
            ("with", False),
            ("law", False),
            ("fit", False),
            ("R²", True),
            ("RMS error", True),
            ("runner-up", False),
            ("ΔAICc", True),
            ("runs", True),
        ]
        body = [self._law_cells(row) for row in rows]
        criteria = list(dict.fromkeys(row.growth.criterion for row in rows if row.growth is not None))
        note = " ".join(esc(c) for c in criteria)
        note += (
            " Charts: every run, the chosen law as a line, and the prediction (◆) with its 95% interval; "
            "a grey prediction is not supported."
        )
        content = self._canvases(charts) + (_capped(headers, body, self.max_rows) if rows else "")
        return section("growth", "growth laws", content, note=note)

    @staticmethod
    def _law_cells(row: GrowthRow) -> list[Cell]:
        cells = [text(metric_label(row.metric)), code(row.param), text(fixed_text(row.fixed))]
        g = row.growth
        if g is None:
            return [*cells, Cell('<span class="na">too few runs</span>', ""), _NA, _NA, _NA, _NA, _NA,
                    Cell(str(row.observations), row.observations)]  # fmt: skip
        best = g.best
        other = runner_up(g)
        delta = other[1] if other is not None and math.isfinite(other[1]) else None
        return [
            *cells,
            Cell(f"<b>{esc(best.law)}</b>", best.law),
            code(formula(best, row.param)),
            _NA if best.law == "constant" else Cell(f"{best.r2:.4f}", best.r2),
            Cell(esc(percent(best.rms_relative)), best.rms_relative),
            text(other[0].law) if other is not None else _NA,
            Cell(f"{delta:+.1f}", delta) if delta is not None else _NA,
            Cell(str(row.observations), row.observations),
        ]

    def _predictions(self, rows: Sequence[PredictionRow]) -> str:
        if not rows:
            return ""
        headers = [
            ("metric", False),
            ("at", False),
            ("with", False),
            ("predicted", True),
            ("95% interval", True),
            ("status", False),
        ]
        body: list[list[Cell]] = []
        for row in rows:
            cells = [
                text(metric_label(row.metric)),
                text(f"{row.param}={format_size(row.target)}"),
                text(fixed_text(row.fixed)),
            ]
            p = row.prediction
            if p is None:
                cells += [
                    _NA,
                    _NA,
                    Cell(f'<span class="bad">{esc(row.reason or "no prediction")}</span>', ""),
                ]
            elif p.supported:
                cells += [
                    Cell(f"<b>{esc(format_metric(row.metric, p.value))}</b>", p.value),
                    Cell(
                        esc(format_range(row.metric, p.low, p.high)),
                        p.high if math.isfinite(p.high) else None,
                    ),
                    Cell('<span class="good">ok</span>', "ok"),
                ]
            else:
                cells += [
                    Cell(f'<span class="na">({esc(format_metric(row.metric, p.value))})</span>', p.value),
                    Cell(
                        f'<span class="na">({esc(format_range(row.metric, p.low, p.high))})</span>',
                        p.high if math.isfinite(p.high) else None,
                    ),
                    Cell(f'<span class="bad">not supported: {esc(p.reason)}</span>', "not supported"),
                ]
            body.append(cells)
        return section(
            "predictions",
            "predictions",
            _capped(headers, body, self.max_rows),
            note="The chosen law's value for one new run, with its 95% prediction interval. A prediction "
            "the fit does not support is shown in parentheses, with the reason.",
        )

    def _budget(self, a: SweepAnalysis) -> str:
        rows = a.budget
        confirmations = a.result.confirmations
        if not rows and not confirmations:
            return ""
        parts = []
        if rows:
            several = len({row.limit_text for row in rows}) > 1
            headers = [
                ("limit", False),
                ("with", False),
                ("largest", True),
                ("predicted", True),
                ("high bound", True),
                ("of limit", True),
                ("note", False),
            ]
            body = [self._budget_cells(row, several and row in a.binding) for row in rows]
            parts.append(_capped(headers, body, self.max_rows))
        if confirmations:
            headers = [
                ("at", False),
                ("metric", False),
                ("predicted", True),
                ("measured", True),
                ("limit", True),
                ("of limit", True),
                ("verdict", False),
            ]
            body = []
            for c in confirmations:
                fits = c.fits
                verdict = (
                    Cell('<span class="na">not measured</span>', "")
                    if fits is None
                    else Cell('<span class="good">fits</span>', "fits")
                    if fits
                    else Cell('<b class="bad">OVER</b>', "OVER")
                )
                body.append(
                    [
                        text(point_text(c.params)),
                        text(metric_label(c.metric)),
                        _metric_cell(c.metric, c.predicted),
                        _metric_cell(c.metric, c.measured),
                        _metric_cell(c.metric, c.limit),
                        Cell(esc(percent(share)), share)
                        if (share := c.measured / c.limit if c.measured is not None and c.limit > 0 else None)
                        is not None
                        else _NA,
                        verdict,
                    ]
                )
            parts.append("<h3>confirmation runs</h3>" + _capped(headers, body, self.max_rows))
        param = rows[0].param if rows else a.size or "size"
        return section(
            "budget",
            f"largest {param} within the budget",
            "".join(parts),
            note="The largest size at which the high end of the 95% interval stays within the limit at "
            "every size up to it; a confirmation run measures it.",
        )

    @staticmethod
    def _budget_cells(row: BudgetRow, binding: bool) -> list[Cell]:
        cells = [text(row.limit_text), text(fixed_text(row.fixed))]
        note = esc(row.reason or "")
        if binding:
            note = "<b>binding</b>" + (f"; {note}" if note else "")
        if row.status == "none":
            return [*cells, Cell('<b class="bad">none fits</b>', -1.0), _NA, _NA, _NA, Cell(note, row.reason)]
        if row.status != "fits" or row.largest is None:
            return [
                *cells,
                Cell('<span class="na">unknown</span>', None),
                _NA,
                _NA,
                _NA,
                Cell(note, row.reason),
            ]
        p = row.prediction
        used = row.margin_used
        return [
            *cells,
            Cell(f"<b>{esc(row.param)} = {esc(format_size(row.largest))}</b>", row.largest),
            _metric_cell(row.metric, p.value if p else None),
            _metric_cell(row.metric, p.high if p else None),
            Cell(esc(percent(used)), used) if used is not None else _NA,
            Cell(note, row.reason or ""),
        ]

    def _param_headers(self, r: SweepResult) -> tuple[list[str], list[tuple[str, bool]]]:
        varied = r.varied() or list(r.params)
        return varied, [(name, is_numeric(r.params[name])) for name in varied]

    def _points(self, r: SweepResult) -> str:
        if not r.points:
            return ""
        varied, headers = self._param_headers(r)
        metrics = sorted({m for p in r.points for run in p.runs for m in run.metrics})
        headers = [*headers, ("peak", True)]
        if r.repeat > 1:
            headers.append((f"peak min{DASH}max", True))
        headers += [("wall", True), ("CPU", True), ("exit", False)]
        headers += [(m, True) for m in metrics]
        body = []
        for p in r.points:
            cells = [_param_cell(p.params.get(n)) for n in varied]
            peak = p.median("rss")
            cells.append(nbytes(peak))
            if r.repeat > 1:
                values = p.values("rss")
                spread = format_range("rss", min(values), max(values)) if len(values) > 1 else ""
                cells.append(Cell(esc(spread), min(values)) if values else _NA)
            cells += [seconds(p.median("wall")), seconds(p.median("cpu"))]
            summary = exit_summary(p, r.repeat)
            cls = "" if summary.startswith("ok") else ' class="bad"'
            cells.append(Cell(f"<span{cls}>{esc(summary)}</span>", summary))
            cells += [_metric_cell(f"metric:{m}", p.median(f"metric:{m}")) for m in metrics]
            body.append(cells)
        runs = f", medians of {r.repeat} runs" if r.repeat > 1 else ""
        return section("points", f"points ({len(r.points)}{runs})", _capped(headers, body, self.max_rows))

    def _phases(self, r: SweepResult) -> str:
        names = top_phases(r)
        if not names:
            return ""
        varied, headers = self._param_headers(r)
        for name in names:
            headers += [(f"{name} peak", True), (f"{name} time", True)]
        body = []
        for p in r.points:
            cells = [_param_cell(p.params.get(n)) for n in varied]
            for name in names:
                peak = p.median(f"phase:{name}.peak")
                cells += [nbytes(peak), seconds(p.median(f"phase:{name}.seconds"))]
            body.append(cells)
        return section(
            "phases",
            "phases",
            _capped(headers, body, self.max_rows),
            note="The outermost phases of each point: medians of their peaks and of their times.",
        )

    def _shares(self, shares: Sequence[PhaseShares], charts: Sequence[dict[str, Any]]) -> str:
        if not shares:
            return ""
        parts = [self._canvases(charts)]
        for s in shares:
            headers = [(s.param, True), *((name, True) for name in s.phases), ("other", True)]
            body = [
                [_param_cell(x), *(Cell(esc(percent(v)), v) for v in row), Cell(esc(percent(other)), other)]
                for x, row, other in share_rows(s)
            ]
            where = f" ({fixed_text(s.fixed)})" if s.fixed else ""
            parts.append(f"<h3>{esc(f'by {s.param}{where}')}</h3>" + _capped(headers, body, self.max_rows))
        return section(
            "shares",
            "share of wall time by phase",
            "".join(parts),
            note="Each outermost phase's median time as a share of the median wall time; other: time in no "
            "phase.",
        )

    def _scaling(self, rows: Sequence[ScalingRow], charts: Sequence[dict[str, Any]]) -> str:
        if not rows:
            return ""
        parts = [self._canvases(charts)]
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
            parts.append(f"<h3>{esc(title)}</h3>" + _capped(headers, body, self.max_rows))
        criteria = " ".join(dict.fromkeys(esc(row.scaling.criterion) for row in rows))
        return section("scaling", "worker scaling", "".join(parts), note=criteria)

    @staticmethod
    def _notes(notes: Sequence[str]) -> str:
        if not notes:
            return ""
        items = "".join(f"<li>{esc(n)}</li>" for n in notes)
        return section("notes", "notes", f"<ul class=notes>{items}</ul>")
