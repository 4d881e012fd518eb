"""The charts of the sweep report, as data for the page script: each metric against each size
(every run, the fitted law, the prediction with its interval), the phases' shares of the wall
time, and the worker scaling against the ideal. The data is sampled here (the law's curve, the
axes' scales); the page script only draws it. The report document carries each chart, with its
data, as a ``Chart`` (the text reports have none)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from memgauge.analysis import (
    Fit,
    PhaseShares,
    Prediction,
    ScalingRow,
    SweepAnalysis,
    series,
    share_rows,
    sizes,
    top_phases,
)
from memgauge.render._document import Chart, Charts
from memgauge.render._sweep_words import (
    fixed_text,
    format_metric,
    format_range,
    format_value,
    metric_label,
    metric_unit,
)

MAX_CHARTS = 12
_MAX_SERIES = 6  # combinations of the other parameters drawn on one growth chart
_FIT_SAMPLES = 40
# both ends of an axis further apart than this: a log axis, or the small sizes crowd at zero
_LOG_SPAN = 10.0
# numbered in the order the page shows them: growth, then shares, then scaling
KINDS = ("growth", "shares", "scaling")


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


def charts(a: SweepAnalysis, most: int = MAX_CHARTS) -> list[dict[str, Any]]:
    """The charts worth drawing, most useful first, at most ``most``: the resident peak and the
    wall time against each size, the worker scaling, the phase shares, then each phase's peak."""
    params = sizes(a.result)
    planned: list[dict[str, Any] | None] = []
    planned += [_growth_chart(a, m, p) for p in params for m in ("rss", "wall")]
    planned += [_scaling_chart(row) for row in a.scaling]
    planned += [_shares_chart(s) for s in a.shares]
    phases = top_phases(a.result)
    planned += [_growth_chart(a, f"phase:{name}.peak", p) for p in params for name in phases]
    out = [c for c in planned if c is not None][:most]
    out.sort(key=lambda c: KINDS.index(c["kind"]))
    for i, chart in enumerate(out):
        chart["id"] = f"chart-sweep-{i}"
    return out


def prediction_text(metric: str, p: Prediction) -> str:
    shown = f"{format_metric(metric, p.value)} ({format_range(metric, p.low, p.high)})"
    return shown if p.supported else f"({shown}) not supported: {p.reason}"


def _growth_chart(a: SweepAnalysis, metric: str, param: str) -> dict[str, Any] | None:
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
            (p for p in a.predictions if p.metric == metric and p.param == param and p.fixed == s.fixed), None
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
                "text": prediction_text(metric, p),
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


def chart_grid(charts: Sequence[dict[str, Any]]) -> Charts:
    """The charts side by side, each under its title, with its data; a growth chart is tall."""
    return Charts(tuple(Chart(c["id"], c["title"], c["kind"] == "growth", c) for c in charts))
