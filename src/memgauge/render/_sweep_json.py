"""The JSON report of ``memgauge sweep``: the record itself plus everything the analysis found.

The record (``SweepResult.to_dict``) comes first, unchanged, so a JSON report can be loaded again
as a record; the analysis sits beside it under ``"analysis"``. Infinite or undefined figures (the
AICc of a law that could not be compared, the bound of an interval with too few runs) become
``null``: JSON has no infinity, and a reader should see "no figure", not a crash.
"""

from __future__ import annotations

import json
import math
from typing import Any

from memgauge.analysis import (
    BudgetRow,
    Fit,
    Growth,
    GrowthRow,
    PhaseShares,
    Prediction,
    PredictionRow,
    Scaling,
    ScalingRow,
    SweepAnalysis,
)


def finite(data: Any) -> Any:
    """``data`` with every infinite or NaN float replaced by None, recursively."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: finite(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [finite(v) for v in data]
    return data


def _fit(fit: Fit) -> dict[str, Any]:
    return {"law": fit.law, "aicc": fit.aicc, "r2": fit.r2}


def _law(row: GrowthRow) -> dict[str, Any]:
    g: Growth | None = row.growth
    out: dict[str, Any] = {"metric": row.metric, "param": row.param, "fixed": dict(row.fixed)}
    if g is None:
        # the same keys either way: a reader need not test for their presence
        out.update(
            dict.fromkeys(("law", "formula", "a", "b", "k", "r2", "rms_relative", "aicc", "criterion"))
        )
        out["candidates"] = []
    else:
        best = g.best
        out.update(
            {
                "law": best.law,
                "formula": best.formula(),
                "a": best.a,
                "b": best.b,
                "k": best.k,
                "r2": best.r2,
                "rms_relative": best.rms_relative,
                "aicc": best.aicc,
                "candidates": [_fit(f) for f in g.candidates],
                "criterion": g.criterion,
            }
        )
    out["observations"] = row.observations
    return out


def _prediction(p: Prediction | None) -> dict[str, Any]:
    if p is None:
        return {"value": None, "low": None, "high": None, "law": None, "supported": False}
    return {"value": p.value, "low": p.low, "high": p.high, "law": p.law, "supported": p.supported}


def _predicted(row: PredictionRow) -> dict[str, Any]:
    p = row.prediction
    return {
        "metric": row.metric,
        "param": row.param,
        "fixed": dict(row.fixed),
        "x": row.target,
        **_prediction(p),
        "reason": row.reason if p is None else p.reason,
    }


def _budget(row: BudgetRow) -> dict[str, Any]:
    return {
        "metric": row.metric,
        "limit": row.limit,
        "limit_text": row.limit_text,
        "param": row.param,
        "fixed": dict(row.fixed),
        "status": row.status,
        "largest": row.largest,
        # the law's own answer where a confirmed size replaced it (not run); None otherwise
        "law_largest": row.law_largest,
        **_prediction(row.prediction),
        "margin_used": row.margin_used,
        "reason": row.reason,
    }


def _shares(s: PhaseShares) -> dict[str, Any]:
    return {
        "param": s.param,
        "fixed": dict(s.fixed),
        "phases": list(s.phases),
        "points": [
            {"x": x, "shares": dict(zip(s.phases, row, strict=True)), "other": other}
            for x, row, other in zip(s.xs, s.shares, s.other, strict=True)
        ],
    }


def _scaling(row: ScalingRow) -> dict[str, Any]:
    sc: Scaling = row.scaling
    return {
        "param": row.param,
        "metric": row.metric,
        "fixed": dict(row.fixed),
        "knee": sc.knee,
        "criterion": sc.criterion,
        "points": [
            {
                "workers": p.workers,
                "throughput": p.throughput,
                "speedup": p.speedup,
                "efficiency": p.efficiency,
            }
            for p in sc.points
        ],
    }


def sweep_json(analysis: SweepAnalysis) -> dict[str, Any]:
    """The record and its analysis as JSON-ready data, safe for ``json.dumps(allow_nan=False)``."""
    a = analysis
    data = a.result.to_dict()
    data["analysis"] = {
        "size": a.size,
        "laws": [_law(r) for r in a.laws],
        "predictions": [_predicted(r) for r in a.predictions],
        "budget": [_budget(r) for r in a.budget],
        "binding": [_budget(r) for r in a.binding],
        "phase_shares": [_shares(s) for s in a.shares],
        "scaling": [_scaling(r) for r in a.scaling],
        "notes": list(a.notes),
    }
    result: dict[str, Any] = finite(data)
    return result


class JsonSweepRenderer:
    def __init__(self, indent: int | None = 1) -> None:
        self.indent = indent

    def render(self, analysis: SweepAnalysis) -> str:
        return json.dumps(sweep_json(analysis), indent=self.indent, allow_nan=False)
