"""Growth laws and predictions over a sweep: a law for each metric against each size, and each
metric's predicted value at a size that was not run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memgauge.analysis._growth import Growth
from memgauge.analysis._predict import Prediction, predict
from memgauge.analysis._sweep_series import fit_series, format_value, series, sizes
from memgauge.model import SweepResult, Value, metric_names


@dataclass(frozen=True)
class GrowthRow:
    metric: str
    param: str
    fixed: dict[str, Value]
    growth: Growth | None
    observations: int


def growth_laws(
    result: SweepResult, metrics: Sequence[str] | None = None, *, exclude: Sequence[str] = ()
) -> list[GrowthRow]:
    """A fitted law for each metric against each size (but ``exclude``), per combination of the
    other parameters."""
    rows: list[GrowthRow] = []
    for param in sizes(result):
        if param in exclude:
            continue
        for metric in metrics if metrics is not None else fit_metrics(result):
            for s in series(result, metric, param):
                rows.append(GrowthRow(metric, param, s.fixed, fit_series(s.xs, s.ys), len(s.xs)))
    return rows


def fit_metrics(result: SweepResult) -> list[str]:
    """The metrics worth a law: the resident peak and times, phases, program metrics (throughput is
    a ratio, shown in the scaling table instead)."""
    return [m for m in metric_names(result) if not m.startswith("throughput:")]


@dataclass(frozen=True)
class PredictionRow:
    metric: str
    param: str
    fixed: dict[str, Value]
    target: float
    prediction: Prediction | None
    reason: str | None  # why there is no prediction at all


def predictions(
    result: SweepResult,
    param: str,
    target: float,
    metrics: Sequence[str],
    fixed: dict[str, Value] | None = None,
) -> list[PredictionRow]:
    rows: list[PredictionRow] = []
    for metric in metrics:
        for s in series(result, metric, param):
            if fixed and not all(s.fixed.get(k) == v for k, v in fixed.items()):
                continue
            growth = fit_series(s.xs, s.ys)
            if growth is None:
                rows.append(PredictionRow(metric, param, s.fixed, target, None, "too few measured runs"))
                continue
            try:
                at = predict(growth, target)
            except ValueError:  # N < 0 for a law that needs N >= 0 (n log n, power)
                reason = f"the {growth.best.law} law is not defined at {param}={format_value(target)}"
                rows.append(PredictionRow(metric, param, s.fixed, target, None, reason))
                continue
            rows.append(PredictionRow(metric, param, s.fixed, target, at, None))
    return rows
