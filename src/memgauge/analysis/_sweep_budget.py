"""The largest size of a sweep's parameter within a budget: per limit and per combination of the
other parameters, the binding limit, and what confirming runs said about the answer.

The search goes no further than the law's reach (``_predict.reach``: 4 times the largest size
measured with 3 sizes, up to 100 times with 6 or more), so an answer is never a size the law
cannot vouch for. A size a confirming run measured within the limit is the answer for its
combination from then on, whatever the law refitted with that run says: a real run outranks a
law that disagreed with it (the law's own answer is kept beside it, ``law_largest``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from memgauge.analysis._growth import Growth
from memgauge.analysis._predict import Prediction, largest_within, predict, reach
from memgauge.analysis._sweep_series import fit_series, format_value, series
from memgauge.model import SweepResult, Value

# how far beyond the largest measured size a budget search looks at most (with 6 sizes or more;
# fewer reach less, as predict refuses beyond that reach too)
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
    # where a confirming run's size replaced it: the law's own answer (not run), else None
    law_largest: float | None = None

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
    integer = all(isinstance(v, int) for v in result.params[param])
    rows: list[BudgetRow] = []
    for metric, limit, text in limits:
        for s in series(result, metric, param):
            row = BudgetRow(metric, limit, text, param, s.fixed, "unknown")
            factor = reach(len(set(s.xs)))
            upper = max(s.xs) * factor
            if max(measured) * SEARCH_FACTOR <= min(s.xs):
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
                note = (
                    f"fits up to the law's reach ({factor:g}x the largest size measured, with "
                    f"{len(set(s.xs))} sizes): measure larger sizes to search further"
                )
            elif not at.supported:
                note = at.reason
            found = replace(row, status="fits", largest=size, prediction=at, reason=note)
            rows.append(_confirmed(result, found, growth))
    return rows


def _confirmed(result: SweepResult, row: BudgetRow, growth: Growth) -> BudgetRow:
    """``row`` with the largest size a confirming run measured within the limit as its answer
    (below every confirmed size that went over), where that differs from the law's."""
    runs = [
        c
        for c in result.confirmations
        if c.metric == row.metric
        and row.param in c.params
        and all(c.params.get(k) == v for k, v in row.fixed.items())
    ]
    over = [float(c.params[row.param]) for c in runs if c.fits is False]
    fits = [c for c in runs if c.fits and all(float(c.params[row.param]) < o for o in over)]
    if not fits or row.largest is None:
        return row
    best = max(fits, key=lambda c: float(c.params[row.param]))
    size = float(best.params[row.param])
    if size == row.largest:
        return row
    return replace(row, largest=size, prediction=predict(growth, size), reason=None, law_largest=row.largest)


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
    """Where a confirmed size replaced the law's answer: the law refitted with the confirming runs
    points elsewhere, and the confirmed size is the one reported."""
    notes: list[str] = []
    for row in rows:
        if row.law_largest is None or row.largest is None:
            continue
        measured = [
            c.measured
            for c in result.confirmations
            if c.metric == row.metric
            and c.params.get(row.param) == _as_value(row.largest)
            and all(c.params.get(k) == v for k, v in row.fixed.items())
        ]
        share = (
            f" ({measured[-1] / row.limit:.0%} of the limit)" if measured and measured[-1] is not None else ""
        )
        where = "".join(f" {k}={v}" for k, v in row.fixed.items())
        notes.append(
            f"{row.limit_text}{where}: {row.param}={format_value(row.largest)} was confirmed by a real "
            f"run{share} and is the answer; the laws refitted with the confirming runs put the largest "
            f"size at {format_value(row.law_largest)}, which was not run"
        )
    return notes


def _as_value(x: float) -> Value:
    return int(x) if float(x).is_integer() else x
