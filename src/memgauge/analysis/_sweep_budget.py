"""The largest size of a sweep's parameter within a budget: per limit and per combination of the
other parameters, the binding limit, and what confirming runs said about the answer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from memgauge.analysis._predict import Prediction, largest_within, predict
from memgauge.analysis._sweep_series import fit_series, format_value, series
from memgauge.model import SweepResult, Value

# how far beyond the largest measured size a budget search looks (predict refuses beyond it too)
SEARCH_FACTOR = 100.0


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
                top = format_value(max(measured))
                reason = f"the search needs a positive largest {param}; measured up to {top}"
                rows.append(replace(row, reason=reason))
                continue
            growth = fit_series(s.xs, s.ys)
            if growth is None or len(set(s.xs)) < 3:
                reason = f"3 sizes are needed to choose a law; measured {len(set(s.xs))}"
                rows.append(replace(row, reason=reason))
                continue
            size = largest_within(growth, limit, upper=upper, integer=integer)
            if size is None:
                reason = f"even {param}={format_value(min(s.xs))} is predicted over the limit"
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


def confirmation_notes(result: SweepResult, rows: Sequence[BudgetRow]) -> list[str]:
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
                f"{row.limit_text}{where}: {row.param}={format_value(size)} was confirmed by a real run "
                f"({last.measured / row.limit:.0%} of the limit); the laws refitted with the confirming "
                f"runs put the largest size at {format_value(row.largest)}, which was not run"
            )
    return notes
