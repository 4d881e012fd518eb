"""Analyses of a sweep, computed once for the reports: growth laws, predictions, the largest size
under a budget, phase shares, worker scaling. Pure functions over a ``SweepResult``.

A varied numeric parameter is a *size*. Each metric is fitted against each size separately, once
per combination of the other parameters' values (``fixed``), over every measured run (repeats are
separate observations, so their spread widens the intervals). Each analysis has a module of its
own (``_sweep_series``, ``_sweep_laws``, ``_sweep_budget``, ``_sweep_shares``, ``_sweep_scaling``);
this one puts them together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memgauge.analysis._sweep_budget import BudgetRow, binding, confirmation_notes, largest_sizes
from memgauge.analysis._sweep_laws import GrowthRow, PredictionRow, fit_metrics, growth_laws, predictions
from memgauge.analysis._sweep_scaling import ScalingRow, scaling, scaling_left_out, workers_param
from memgauge.analysis._sweep_series import is_numeric, sizes
from memgauge.analysis._sweep_shares import PhaseShares, phase_shares
from memgauge.model import SweepResult, Value, metric_names

# is_numeric and PhaseShares only for the modules that still import them from here (their homes
# are _sweep_series and _sweep_shares): drop them once none does
__all__ = ["PhaseShares", "SweepAnalysis", "analyze", "is_numeric"]


@dataclass(frozen=True)
class SweepAnalysis:
    """Everything the sweep reports say, computed once: what the renderers draw."""

    result: SweepResult
    size: str | None  # the parameter predictions and budgets are about
    laws: tuple[GrowthRow, ...]
    predictions: tuple[PredictionRow, ...]
    budget: tuple[BudgetRow, ...]
    binding: tuple[BudgetRow, ...]
    shares: tuple[PhaseShares, ...]
    scaling: tuple[ScalingRow, ...]
    notes: tuple[str, ...]


def _worker_scaling(
    result: SweepResult, worker: str, throughput: str | None, notes: list[str]
) -> tuple[ScalingRow, ...]:
    """The speedup over the ``worker`` count of the ``throughput`` metric (the first recorded, when
    None); a note, and no rows, where no such metric was recorded."""
    metrics = [m.partition(":")[2] for m in metric_names(result) if m.startswith("metric:")]
    chosen = throughput or (metrics[0] if metrics else None)
    if chosen is None:
        notes.append(
            f"{worker} looks like a worker count, but the program records no metric to divide by the "
            "wall time (memgauge.record('items', n))"
        )
        return ()
    if chosen not in metrics:
        # a misspelt --metric would otherwise just leave the scaling table out, unexplained
        recorded = ", ".join(metrics) or "none"
        notes.append(f"no run recorded the metric {chosen!r} (recorded: {recorded}); no worker scaling")
        return ()
    left_out = scaling_left_out(result, worker, chosen)
    if left_out:
        notes.append(
            f"worker scaling leaves out {left_out} run(s) with {worker} or {chosen} per second "
            "at 0 or below: a speedup relative to them is undefined"
        )
    return tuple(scaling(result, worker, chosen))


def analyze(
    result: SweepResult,
    *,
    predict_at: tuple[str, float, dict[str, Value]] | None = None,
    limits: Sequence[tuple[str, float, str]] = (),
    size: str | None = None,
    workers: str | None = None,
    throughput: str | None = None,
) -> SweepAnalysis:
    """``predict_at``: (size, value, measured values of others); ``limits``: (metric, limit, text)
    for the largest size under a budget; ``workers`` / ``throughput``: the worker-count parameter
    and the program metric counting work done (found by name, and the first metric, when None)."""
    notes: list[str] = []
    numeric = sizes(result)
    if size is None:
        size = predict_at[0] if predict_at is not None else (numeric[0] if numeric else None)
    worker = workers_param(result, workers)
    if worker is not None and size == worker and len(numeric) > 1 and predict_at is None:
        size = next(n for n in numeric if n != worker)
    # a worker count is no size: throughput, not a growth law, describes it
    laws = tuple(growth_laws(result, exclude=[worker] if worker is not None else []))
    preds: tuple[PredictionRow, ...] = ()
    if predict_at is not None:
        name, value, fixed = predict_at
        preds = tuple(predictions(result, name, value, fit_metrics(result), fixed))
    budget_rows: tuple[BudgetRow, ...] = ()
    if limits:
        if size is None:
            notes.append("a budget needs a numeric parameter with more than one value to search along")
        else:
            budget_rows = tuple(largest_sizes(result, size, limits))
    shares = tuple(s for name in numeric for s in phase_shares(result, name))
    scaling_rows = _worker_scaling(result, worker, throughput, notes) if worker is not None else ()
    notes += confirmation_notes(result, binding(budget_rows))
    failed = sum(1 for p in result.points for r in p.runs if not r.ok)
    if failed:
        notes.append(f"{failed} run(s) failed or were stopped: their figures are shown, marked, not fitted")
    if not result.complete:
        notes.append("the sweep was interrupted: these are the runs that finished")
    return SweepAnalysis(
        result,
        size,
        laws,
        preds,
        budget_rows,
        tuple(binding(budget_rows)),
        shares,
        scaling_rows,
        tuple(notes),
    )
