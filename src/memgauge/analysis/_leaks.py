"""Leak suspects from the retained-memory series of lines.

A line is a suspect when the resident memory charged to it (including what the functions it calls
retain) grows steadily until the end of the run and is not released: a straight line fits its
growth (R^2 >= ``min_r2`` on an even time grid, so a burst followed by a long flat stretch does
not fit), it grew for at least ``min_span`` seconds, it was still growing in the last quarter of
that span by at least an eighth of its whole growth (half what a steady growth adds there: a
bounded cache that filled, then churns, rises by a few pages at a time and is not growing), and it
ends within 10% of its maximum. Of a line and a line it calls that both qualify
with the same rate (within 5%), only the deeper one is reported: it is closer to the cause. Inside
one function, sampling cannot tell which line grew memory when the function also spends time
elsewhere (a request that allocates, then waits): then the call of that function is reported.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K")

_GRID = 32
# the shortest growth judged: a run whose line samples span less cannot be judged at all
LEAK_MIN_SPAN_SECONDS = 0.5


@dataclass(frozen=True)
class LeakFit(Generic[K]):
    key: K
    rate_bytes_per_second: float
    retained_bytes: int
    first_seconds: float
    last_seconds: float
    r2: float


def _value_at(points: Sequence[tuple[float, int]], t: float, start: int) -> tuple[int, int]:
    i = start
    while i + 1 < len(points) and points[i + 1][0] <= t:
        i += 1
    return points[i][1], i


def fit_growth(
    points: Sequence[tuple[float, int]],
    t_end: float,
    *,
    min_bytes: int = 1 << 20,
    min_span: float = LEAK_MIN_SPAN_SECONDS,
) -> tuple[float, float, float, float] | None:
    """(rate, r2, first, last) of a steady growth, or None. ``points`` are (time, retained) in
    time order, each the value from that time on."""
    if len(points) < 5:
        return None
    end = points[-1][1]
    if end < min_bytes or end < 0.9 * max(b for _, b in points):
        return None
    base = points[0][1]
    first = next((t for t, b in points if b > base), None)
    last_rise = max(
        (points[i][0] for i in range(1, len(points)) if points[i][1] > points[i - 1][1]), default=None
    )
    if first is None or last_rise is None:
        return None
    span = t_end - first
    if span < min_span or last_rise < first + 0.75 * span:
        return None
    quarter, _ = _value_at(points, first + 0.75 * span, 0)
    if end - quarter < (end - base) / 8:
        return None
    xs = [first + span * k / (_GRID - 1) for k in range(_GRID)]
    ys: list[float] = []
    i = 0
    for x in xs:
        value, i = _value_at(points, x, i)
        ys.append(float(value))
    mx, my = sum(xs) / _GRID, sum(ys) / _GRID
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    syy = sum((y - my) ** 2 for y in ys)
    if sxx <= 0 or syy <= 0:
        return None
    slope = sxy / sxx
    r2 = sxy * sxy / (sxx * syy)
    if slope <= 0:
        return None
    return slope, r2, first, last_rise


def leak_suspects(
    series: Mapping[K, Sequence[tuple[float, int]]],
    t_end: float,
    callers: Iterable[tuple[K, K]],
    *,
    min_r2: float = 0.9,
    min_bytes: int = 1 << 20,
    min_span: float = LEAK_MIN_SPAN_SECONDS,
) -> list[LeakFit[K]]:
    """Suspects, fastest growth first. ``callers`` holds (outer, inner) pairs: ``outer`` called
    (directly or not) ``inner`` in some sampled stack."""
    fits: dict[K, LeakFit[K]] = {}
    for key, points in series.items():
        fit = fit_growth(points, t_end, min_bytes=min_bytes, min_span=min_span)
        if fit is not None and fit[1] >= min_r2:
            fits[key] = LeakFit(key, fit[0], points[-1][1], fit[2], fit[3], fit[1])
    covered = {
        outer
        for outer, inner in callers
        if outer in fits
        and inner in fits
        and fits[inner].rate_bytes_per_second >= 0.95 * fits[outer].rate_bytes_per_second
    }
    return sorted((f for k, f in fits.items() if k not in covered), key=lambda f: -f.rate_bytes_per_second)


def callers_in(stacks: Iterable[Sequence[K]], keys: Collection[K]) -> set[tuple[K, K]]:
    """The ``callers`` of ``leak_suspects``: ``(outer, inner)`` for every two entries of ``keys``
    found in one stack (outermost first), ``outer`` the nearer the stack's root."""
    return {
        (stack[i], stack[j])
        for stack in stacks
        for i in range(len(stack))
        for j in range(i + 1, len(stack))
        if stack[i] in keys and stack[j] in keys
    }
