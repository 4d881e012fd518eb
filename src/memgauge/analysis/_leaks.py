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

A one-off build of a kept structure (a loop that fills a list, then the program ends) also grows
steadily to the end; what tells it from a leak is where the threads were meanwhile. A leak recurs
across a loop whose iterations do other things too (a sleep, the rest of a request): the lines its
growth is credited to (the innermost lines of the sampled stacks that hold it: its *positions*)
take a small share of its span, the other lines of the loop the rest. A one-off build is one pass
of its positions, sample after sample running them. Given the time the threads spent on each line
(``seconds_at``: on a CPU, queued for one, waiting), a line is such a build, and not a suspect,
when its positions ran or were queued to run for at least ``ONE_OFF_SHARE`` of its growth span and
ran at least as long as they waited. The second condition keeps a leak whose growth was credited
to the wait that follows it (a sleep line the thread sits on, sample after sample, when a loaded
machine hides that it was blocked): a line that waits builds nothing, what grew meanwhile was made
by the lines around it. Measured on a loaded 2-core machine: 1.03 for ``tests/programs/leak_short.py``
(0.38 s running, 1.72 s queued, 0.02 s waiting), 0 to 0.35 for the allocating lines of the request
loops (``leak_loop.py``, ``lines_leak.py``, ``leak_short_loop.py``); the sleep line of
``leak_short_loop.py``, credited with growth when the machine is loaded, 0.69 to 0.74 (0.09 to 0.14 s
running, 0.27 to 0.30 s waiting). Queueing stretches a loop's running lines more than its waits, so
the bar is three quarters. The time is the whole run's, so a position busy before the growth began
makes the share larger, never smaller. A loop that does nothing but allocate and keep is judged a
build too: sampling cannot tell it from one. In a loop that never waits, sampling credits the
growth to the running work lines, which are judged a build; the leak is then found only where its
allocating line got enough of the growth for a fit of its own.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

TYPE_CHECKING = False  # not typing's: a run imports no typing (docs/benchmarks.md)
if TYPE_CHECKING:
    from typing import Generic, TypeVar

    K = TypeVar("K")

    class _Keyed(Generic[K]):
        """A fit keyed by ``K`` for the type checker."""

else:
    K = object

    class _Keyed:
        """``Generic``'s subscription at run time, without typing's import (every run loads this
        module, after the program)."""

        def __class_getitem__(cls, item: object) -> type:
            return cls


_IMPORT_LINE = re.compile(r"^(import\s|from\s+\S+\s+import\b)")
_GRID = 32
# the shortest growth judged: a run whose line samples span less cannot be judged at all
LEAK_MIN_SPAN_SECONDS = 0.5
# a line whose positions ran (or were queued to) for at least this share of its growth span, and
# ran at least as long as they waited, is a one-off build, not a leak
ONE_OFF_SHARE = 0.75


@dataclass(frozen=True)
class LeakFit(_Keyed[K]):
    key: K
    rate_bytes_per_second: float
    retained_bytes: int
    first_seconds: float
    last_seconds: float
    r2: float


def is_import_line(source: str) -> bool:
    """An import statement: what it holds is a library's footprint, a one-off cost, never
    temporaries to work around or a leak."""
    return _IMPORT_LINE.match(source.strip()) is not None


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
    stacks: Iterable[Sequence[K]] = (),
    seconds_at: Mapping[K, tuple[float, float, float]] | None = None,
    one_off_share: float = ONE_OFF_SHARE,
) -> list[LeakFit[K]]:
    """Suspects, fastest growth first. ``callers`` holds (outer, inner) pairs: ``outer`` called
    (directly or not) ``inner`` in some sampled stack. With ``seconds_at`` (per line, innermost:
    the seconds its threads ran, were queued for a CPU, and waited), a one-off build is left out
    (see the module docstring); its positions are the innermost lines of the ``stacks`` (those
    holding memory, outermost first) that hold it."""
    positions = positions_of(stacks, series) if seconds_at is not None else {}
    fits: dict[K, LeakFit[K]] = {}
    for key, points in series.items():
        fit = fit_growth(points, t_end, min_bytes=min_bytes, min_span=min_span)
        if fit is None or fit[1] < min_r2:
            continue
        if seconds_at is not None:
            share, ran_more = build_share(positions.get(key, {key}), seconds_at, t_end - fit[2])
            if share >= one_off_share and ran_more:
                continue
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


def positions_of(stacks: Iterable[Sequence[K]], keys: Collection[K]) -> dict[K, set[K]]:
    """For every entry of ``keys``: the innermost lines of the ``stacks`` (outermost first) it is
    in, itself included where it is innermost."""
    out: dict[K, set[K]] = {}
    for stack in stacks:
        if not stack:
            continue
        for key in set(stack):
            if key in keys:
                out.setdefault(key, set()).add(stack[-1])
    return out


def build_share(
    positions: Collection[K], seconds_at: Mapping[K, tuple[float, float, float]], span: float
) -> tuple[float, bool]:
    """The share of a growth span of ``span`` seconds the threads spent running or queued to run
    on ``positions`` (about 1 for a one-off build, the allocating part of an iteration for a leak
    in a loop), and whether they ran at least as long as they waited there."""
    running = queued = waiting = 0.0
    for p in positions:
        ran, queue, wait = seconds_at.get(p, (0.0, 0.0, 0.0))
        running, queued, waiting = running + ran, queued + queue, waiting + wait
    share = (running + queued) / span if span > 0 else 1.0
    return share, running >= waiting
