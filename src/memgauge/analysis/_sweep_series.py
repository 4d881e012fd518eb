"""The series a sweep's analyses fit: one metric against one size, per combination of the other
parameters' values, over every measured run.

A varied numeric parameter is a *size*. Repeats are separate observations (their spread widens the
intervals), and confirming runs join their series.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from memgauge.analysis._growth import select_law
from memgauge.model import Point, SweepResult, Value

# the laws, the predictions and the budget search (repeated after each confirming run) ask for the
# same series' fit: select_law is pure and its inputs are tuples, so each series is fitted once
fit_series = functools.lru_cache(maxsize=4096)(select_law)


def is_numeric(values: Sequence[Value]) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def sizes(result: SweepResult) -> list[str]:
    """The varied numeric parameters, in the order given."""
    return [name for name in result.varied() if is_numeric(result.params[name])]


def combinations(result: SweepResult, param: str) -> list[dict[str, Value]]:
    others = [name for name in result.varied() if name != param]
    return [
        dict(zip(others, combo, strict=True))
        for combo in itertools.product(*(result.params[n] for n in others))
    ]


def matches(point: Point, fixed: dict[str, Value]) -> bool:
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
    for fixed in combinations(result, param):
        xs: list[float] = []
        ys: list[float] = []
        for point in [*result.points, *confirming]:
            if matches(point, fixed) and param in point.params:
                for run in point.runs:
                    y = run.value(metric) if run.ok else None
                    if y is not None:
                        xs.append(float(point.params[param]))
                        ys.append(y)
        if xs:
            out.append(Series(metric, param, fixed, tuple(xs), tuple(ys)))
    return out


def format_value(x: float) -> str:
    """A size as the reports and notes name it: whole numbers without a decimal point."""
    return str(int(x)) if math.isfinite(x) and x == int(x) else f"{x:g}"
