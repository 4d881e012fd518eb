"""The sections of the sweep page about the fits: the growth laws (with their charts), the
predictions, and the largest size within the budget (with the confirmation runs). Each is a
function from a ``SweepView`` to a ``Part``, or None when the analysis has nothing for it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from memgauge.analysis import BudgetRow, GrowthRow, SweepAnalysis, limit_share, runner_up
from memgauge.model import Value
from memgauge.render._format import esc, percent
from memgauge.render._html_page import NA, Cell, Part, capped, code, text
from memgauge.render._html_sweep_charts import canvases
from memgauge.render._sweep_words import (
    fixed_text,
    format_metric,
    format_range,
    format_size,
    format_value,
    formula,
    metric_label,
)


@dataclass(frozen=True)
class SweepView:
    """What the sections of a sweep's page are built from: the analysis, its charts by kind
    ("growth", "shares", "scaling"), and the most rows a table shows."""

    analysis: SweepAnalysis
    charts: dict[str, list[dict[str, Any]]]
    max_rows: int


def param_cell(value: Value | None) -> Cell:
    if value is None:
        return NA
    sort: float | str = float(value) if isinstance(value, (int, float)) else str(value)
    return Cell(esc(format_value(value)), sort)


def metric_cell(metric: str, value: float | None) -> Cell:
    if value is None or not math.isfinite(value):
        return NA
    return Cell(esc(format_metric(metric, value)), value)


def growth(v: SweepView) -> Part | None:
    rows = v.analysis.laws
    charts = v.charts["growth"]
    if not rows and not charts:
        return None
    headers = [("metric", False), ("vs", False), ("with", False), ("law", False), ("fit", False)]
    headers += [("R²", True), ("RMS error", True), ("runner-up", False), ("ΔAICc", True), ("runs", True)]
    body = [_law_cells(row) for row in rows]
    criteria = list(dict.fromkeys(row.growth.criterion for row in rows if row.growth is not None))
    note = " ".join(esc(c) for c in criteria)
    note += (
        " Charts: every run, the chosen law as a line, and the prediction (◆) with its 95% interval; "
        "a grey prediction is not supported."
    )
    content = canvases(charts) + (capped(headers, body, v.max_rows) if rows else "")
    return Part(content, "growth laws", note)


def _law_cells(row: GrowthRow) -> list[Cell]:
    cells = [text(metric_label(row.metric)), code(row.param), text(fixed_text(row.fixed))]
    runs = Cell(str(row.observations), row.observations)
    g = row.growth
    if g is None:
        return [*cells, Cell('<span class="na">too few runs</span>', ""), NA, NA, NA, NA, NA, runs]
    best = g.best
    other = runner_up(g)
    delta = other[1] if other is not None and math.isfinite(other[1]) else None
    return [
        *cells,
        Cell(f"<b>{esc(best.law)}</b>", best.law),
        code(formula(best, row.param)),
        NA if best.law == "constant" else Cell(f"{best.r2:.4f}", best.r2),
        Cell(esc(percent(best.rms_relative)), best.rms_relative),
        text(other[0].law) if other is not None else NA,
        Cell(f"{delta:+.1f}", delta) if delta is not None else NA,
        runs,
    ]


def predictions(v: SweepView) -> Part | None:
    rows = v.analysis.predictions
    if not rows:
        return None
    headers = [("metric", False), ("at", False), ("with", False), ("predicted", True)]
    headers += [("95% interval", True), ("status", False)]
    body: list[list[Cell]] = []
    for row in rows:
        cells = [
            text(metric_label(row.metric)),
            text(f"{row.param}={format_size(row.target)}"),
            text(fixed_text(row.fixed)),
        ]
        p = row.prediction
        if p is None:
            cells += [NA, NA, Cell(f'<span class="bad">{esc(row.reason or "no prediction")}</span>', "")]
        else:
            high = p.high if math.isfinite(p.high) else None
            value = esc(format_metric(row.metric, p.value))
            interval = esc(format_range(row.metric, p.low, p.high))
            if p.supported:
                cells += [
                    Cell(f"<b>{value}</b>", p.value),
                    Cell(interval, high),
                    Cell('<span class="good">ok</span>', "ok"),
                ]
            else:
                cells += [
                    Cell(f'<span class="na">({value})</span>', p.value),
                    Cell(f'<span class="na">({interval})</span>', high),
                    Cell(f'<span class="bad">not supported: {esc(p.reason)}</span>', "not supported"),
                ]
        body.append(cells)
    return Part(
        capped(headers, body, v.max_rows),
        "predictions",
        "The chosen law's value for one new run, with its 95% prediction interval. A prediction "
        "the fit does not support is shown in parentheses, with the reason.",
    )


def budget(v: SweepView) -> Part | None:
    a = v.analysis
    rows = a.budget
    confirmations = a.result.confirmations
    if not rows and not confirmations:
        return None
    parts = []
    if rows:
        several = len({row.limit_text for row in rows}) > 1
        headers = [("limit", False), ("with", False), ("largest", True), ("predicted", True)]
        headers += [("high bound", True), ("of limit", True), ("note", False)]
        body = [_budget_cells(row, several and row in a.binding) for row in rows]
        parts.append(capped(headers, body, v.max_rows))
    if confirmations:
        headers = [("at", False), ("metric", False), ("predicted", True), ("measured", True)]
        headers += [("limit", True), ("of limit", True), ("verdict", False)]
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
            share = limit_share(c)
            body.append(
                [
                    text(fixed_text(c.params)),
                    text(metric_label(c.metric)),
                    metric_cell(c.metric, c.predicted),
                    metric_cell(c.metric, c.measured),
                    metric_cell(c.metric, c.limit),
                    Cell(esc(percent(share)), share) if share is not None else NA,
                    verdict,
                ]
            )
        parts.append("<h3>confirmation runs</h3>" + capped(headers, body, v.max_rows))
    param = rows[0].param if rows else a.size or "size"
    return Part(
        "".join(parts),
        f"largest {param} within the budget",
        "The largest size at which the high end of the 95% interval stays within the limit at "
        "every size up to it; a confirmation run measures it.",
    )


def _budget_cells(row: BudgetRow, binding: bool) -> list[Cell]:
    cells = [text(row.limit_text), text(fixed_text(row.fixed))]
    note = esc(row.reason or "")
    if binding:
        note = "<b>binding</b>" + (f"; {note}" if note else "")
    if row.status == "none":
        return [*cells, Cell('<b class="bad">none fits</b>', -1.0), NA, NA, NA, Cell(note, row.reason)]
    if row.status != "fits" or row.largest is None:
        return [*cells, Cell('<span class="na">unknown</span>', None), NA, NA, NA, Cell(note, row.reason)]
    p = row.prediction
    used = row.margin_used
    return [
        *cells,
        Cell(f"<b>{esc(row.param)} = {esc(format_size(row.largest))}</b>", row.largest),
        metric_cell(row.metric, p.value if p else None),
        metric_cell(row.metric, p.high if p else None),
        Cell(esc(percent(used)), used) if used is not None else NA,
        Cell(note, row.reason or ""),
    ]
