"""Analyses of a sweep: growth laws, predictions, the largest size under a budget, phase shares,
worker scaling. Pure functions over a ``SweepResult``.

A varied numeric parameter is a *size*. Each metric is fitted against each size separately, once
per combination of the other parameters' values (``fixed``), over every measured run (repeats are
separate observations, so their spread widens the intervals).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from memgauge.analysis._growth import (
    Growth,
    Prediction,
    Scaling,
    largest_within,
    predict,
    select_law,
    worker_scaling,
)
from memgauge.model import Point, SweepResult, Value, metric_names

# the laws, the predictions and the budget search (repeated after each confirming run) ask for the
# same series' fit: select_law is pure and its inputs are tuples, so each series is fitted once
_fit = functools.lru_cache(maxsize=4096)(select_law)

# how far beyond the largest measured size a budget search looks (predict refuses beyond it too)
SEARCH_FACTOR = 100.0


def is_numeric(values: Sequence[Value]) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def sizes(result: SweepResult) -> list[str]:
    """The varied numeric parameters, in the order given."""
    return [name for name in result.varied() if is_numeric(result.params[name])]


def _combinations(result: SweepResult, param: str) -> list[dict[str, Value]]:
    others = [name for name in result.varied() if name != param]
    return [
        dict(zip(others, combo, strict=True))
        for combo in itertools.product(*(result.params[n] for n in others))
    ]


def _matches(point: Point, fixed: dict[str, Value]) -> bool:
    return all(point.params.get(k) == v for k, v in fixed.items())


@dataclass(frozen=True)
class Series:
    metric: str
    param: str
    fixed: dict[str, Value]
    xs: tuple[float, ...]
    ys: tuple[float, ...]


def series(result: SweepResult, metric: str, param: str) -> list[Series]:
    """Every successful run's ``metric`` against ``param``, one series per combination of the
    others. A run that failed (non-zero exit, killed, timed out) is left out: its peak stopped
    short and its time was cut. Confirming runs are measurements too: they join their series."""
    confirming = [Point(c.params, [c.run]) for c in result.confirmations]
    out: list[Series] = []
    for fixed in _combinations(result, param):
        xs: list[float] = []
        ys: list[float] = []
        for point in [*result.points, *confirming]:
            if _matches(point, fixed) and param in point.params:
                for run in point.runs:
                    y = run.value(metric) if run.ok else None
                    if y is not None:
                        xs.append(float(point.params[param]))
                        ys.append(y)
        if xs:
            out.append(Series(metric, param, fixed, tuple(xs), tuple(ys)))
    return out


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
                rows.append(GrowthRow(metric, param, s.fixed, _fit(s.xs, s.ys), len(s.xs)))
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
            growth = _fit(s.xs, s.ys)
            if growth is None:
                rows.append(PredictionRow(metric, param, s.fixed, target, None, "too few measured runs"))
                continue
            try:
                at = predict(growth, target)
            except ValueError:  # N < 0 for a law that needs N >= 0 (n log n, power)
                reason = f"the {growth.best.law} law is not defined at {param}={_fmt(target)}"
                rows.append(PredictionRow(metric, param, s.fixed, target, None, reason))
                continue
            rows.append(PredictionRow(metric, param, s.fixed, target, at, None))
    return rows


@dataclass(frozen=True)
class BudgetRow:
    """The largest ``param`` whose predicted ``metric`` (the interval's high bound) stays within
    ``limit``, with the prediction there. ``status``: ``fits`` (``largest`` found), ``none`` (even
    the smallest size measured is predicted over) or ``unknown`` (``reason`` says why)."""

    metric: str
    limit: float
    limit_text: str
    param: str
    fixed: dict[str, Value]
    status: str
    largest: float | None = None
    prediction: Prediction | None = None
    reason: str | None = None

    @property
    def margin_used(self) -> float | None:
        """The predicted value's share of the limit (the high bound's share is at most 1)."""
        if self.prediction is None or self.limit <= 0:
            return None
        return self.prediction.value / self.limit


def budget_metric(metric: str, phase: str | None) -> str | None:
    """The sweep metric a budget limit (``rss``, ``wall``, ``cpu``, ``PHASE.rss``, ...) applies to;
    None for what sweeps do not measure (``gpu``, a phase's CPU)."""
    if phase is None:
        return metric if metric in ("rss", "wall", "cpu") else None
    return {"rss": f"phase:{phase}.peak", "wall": f"phase:{phase}.seconds"}.get(metric)


def largest_sizes(
    result: SweepResult, param: str, limits: Sequence[tuple[str, float, str]]
) -> list[BudgetRow]:
    """For each ``(metric, limit, text)`` and each combination of the other parameters."""
    measured = [float(v) for v in result.params[param]]
    upper = max(measured) * SEARCH_FACTOR
    integer = all(isinstance(v, int) for v in result.params[param])
    rows: list[BudgetRow] = []
    for metric, limit, text in limits:
        for s in series(result, metric, param):
            row = BudgetRow(metric, limit, text, param, s.fixed, "unknown")
            if upper <= min(s.xs):
                # sizes at or below 0: "100x the largest" is no bound above them to search up to
                reason = f"the search needs a positive largest {param}; measured up to {_fmt(max(measured))}"
                rows.append(replace(row, reason=reason))
                continue
            growth = _fit(s.xs, s.ys)
            if growth is None or len(set(s.xs)) < 3:
                reason = f"3 sizes are needed to choose a law; measured {len(set(s.xs))}"
                rows.append(replace(row, reason=reason))
                continue
            size = largest_within(growth, limit, upper=upper, integer=integer)
            if size is None:
                reason = f"even {param}={_fmt(min(s.xs))} is predicted over the limit"
                rows.append(replace(row, status="none", reason=reason))
                continue
            at = predict(growth, size)
            note: str | None = None
            if size >= upper * 0.999:
                note = f"fits up to the search's end ({SEARCH_FACTOR:g}x the largest size measured)"
            elif not at.supported:
                note = at.reason
            rows.append(replace(row, status="fits", largest=size, prediction=at, reason=note))
    return rows


def binding(rows: Sequence[BudgetRow]) -> list[BudgetRow]:
    """Per combination of the other parameters, the limit that allows the smallest size: a limit
    nothing fits first, then the smallest size found; unknown only when every limit is."""

    def rank(row: BudgetRow) -> tuple[int, float]:
        if row.status == "none":
            return (0, 0.0)
        if row.status == "fits" and row.largest is not None:
            return (1, row.largest)
        return (2, 0.0)

    by_fixed: dict[tuple[tuple[str, Value], ...], BudgetRow] = {}
    for row in rows:
        key = tuple(sorted(row.fixed.items(), key=lambda kv: kv[0]))
        seen = by_fixed.get(key)
        if seen is None or rank(row) < rank(seen):
            by_fixed[key] = row
    return list(by_fixed.values())


@dataclass(frozen=True)
class PhaseShares:
    """Each top-level phase's share of the wall time (median runs) at each value of ``param``;
    ``other`` is the time in no phase."""

    param: str
    fixed: dict[str, Value]
    xs: tuple[Value, ...]
    phases: tuple[str, ...]
    shares: tuple[tuple[float, ...], ...]  # per x, per phase (same order as ``phases``)
    other: tuple[float, ...]


def phase_shares(result: SweepResult, param: str) -> list[PhaseShares]:
    out: list[PhaseShares] = []
    for fixed in _combinations(result, param):
        points = [p for p in result.points if _matches(p, fixed) and p.median("wall")]
        names: dict[str, None] = {}
        for p in points:
            for run in p.runs:
                names.update(dict.fromkeys(n for n, ph in run.phases.items() if ph.depth == 0))
        if not points or not names:
            continue
        phases = tuple(names)
        shares: list[tuple[float, ...]] = []
        other: list[float] = []
        for p in points:
            wall = p.median("wall") or 1.0
            row = tuple(min(1.0, (p.median(f"phase:{n}.seconds") or 0.0) / wall) for n in phases)
            shares.append(row)
            other.append(max(0.0, 1.0 - sum(row)))
        out.append(
            PhaseShares(
                param, fixed, tuple(p.params[param] for p in points), phases, tuple(shares), tuple(other)
            )
        )
    return out


@dataclass(frozen=True)
class ScalingRow:
    param: str
    metric: str  # the program metric whose rate is the throughput
    fixed: dict[str, Value]
    scaling: Scaling


WORKER_NAMES = (
    "WORKERS",
    "N_WORKERS",
    "NUM_WORKERS",
    "JOBS",
    "N_JOBS",
    "PROCS",
    "PROCESSES",
    "THREADS",
    "N_THREADS",
)


def workers_param(result: SweepResult, explicit: str | None = None) -> str | None:
    """The parameter that counts workers: ``explicit``, else a numeric varied one named like it."""
    if explicit is not None:
        return explicit
    for name in sizes(result):
        if name.upper() in WORKER_NAMES:
            return name
    return None


def scaling(result: SweepResult, param: str, metric: str) -> list[ScalingRow]:
    """Throughput (``metric`` per wall second), speedup, efficiency and the knee against ``param``.
    Runs with no workers or no throughput (a count of 0, a metric of 0) are left out: a speedup
    relative to them is undefined (``scaling_left_out`` counts them)."""
    rows: list[ScalingRow] = []
    for s in series(result, f"throughput:{metric}", param):
        kept = [(x, y) for x, y in zip(s.xs, s.ys, strict=True) if x > 0 and y > 0]
        if len({x for x, _ in kept}) >= 2:
            xs, ys = zip(*kept, strict=True)
            rows.append(ScalingRow(param, metric, s.fixed, worker_scaling(xs, ys)))
    return rows


def scaling_left_out(result: SweepResult, param: str, metric: str) -> int:
    """The runs ``scaling`` leaves out: a worker count or a throughput that is not positive."""
    return sum(
        1
        for s in series(result, f"throughput:{metric}", param)
        for x, y in zip(s.xs, s.ys, strict=True)
        if not (x > 0 and y > 0)
    )


def _fmt(x: float) -> str:
    return str(int(x)) if math.isfinite(x) and x == int(x) else f"{x:g}"


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
    scaling_rows: tuple[ScalingRow, ...] = ()
    if worker is not None:
        metrics = [m.partition(":")[2] for m in metric_names(result) if m.startswith("metric:")]
        chosen = throughput or (metrics[0] if metrics else None)
        if chosen is None:
            notes.append(
                f"{worker} looks like a worker count, but the program records no metric to divide by the "
                "wall time (memgauge.record('items', n))"
            )
        elif chosen not in metrics:
            # a misspelt --metric would otherwise just leave the scaling table out, unexplained
            recorded = ", ".join(metrics) or "none"
            notes.append(f"no run recorded the metric {chosen!r} (recorded: {recorded}); no worker scaling")
        else:
            scaling_rows = tuple(scaling(result, worker, chosen))
            left_out = scaling_left_out(result, worker, chosen)
            if left_out:
                notes.append(
                    f"worker scaling leaves out {left_out} run(s) with {worker} or {chosen} per second "
                    "at 0 or below: a speedup relative to them is undefined"
                )
    notes += _confirmation_notes(result, binding(budget_rows))
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


def _confirmation_notes(result: SweepResult, rows: Sequence[BudgetRow]) -> list[str]:
    """The size a real run confirmed, where the laws refitted with that run point elsewhere: the
    confirmed size is the one to trust."""
    notes: list[str] = []
    for row in rows:
        confirmed = [
            c
            for c in result.confirmations
            if c.metric == row.metric
            and c.fits
            and row.param in c.params
            and all(c.params.get(k) == v for k, v in row.fixed.items())
        ]
        if not confirmed or row.largest is None:
            continue
        last = confirmed[-1]
        size = float(last.params[row.param])
        if size != row.largest and last.measured is not None:
            where = "".join(f" {k}={v}" for k, v in row.fixed.items())
            notes.append(
                f"{row.limit_text}{where}: {row.param}={_fmt(size)} was confirmed by a real run "
                f"({last.measured / row.limit:.0%} of the limit); the laws refitted with the confirming "
                f"runs put the largest size at {_fmt(row.largest)}, which was not run"
            )
    return notes
