"""The search of ``memgauge fit``: the largest integer value of one parameter whose run stays within
a budget, each trial a fresh run (``_fit_run`` makes them; this module only decides what to try).

The search is guided by the growth law fitted so far (``analysis.select_law`` over the trials
measured): the next value is where the law says the first limit is crossed. A guess that does not
at least halve the bracket is followed by a plain bisection step, so a law that predicts badly
costs at most twice the runs of bisection, and a good law closes the bracket in two or three runs.
The search stops at a precision that matters: once the smallest value that did not fit is at most
a tolerance (a fraction, ``memgauge fit``'s ``--tolerance``, 3% by default) above the largest that
did, not when the two are 1 apart (runs of 30 s spent on values 1 apart among 100,000 say nothing
a user acts on). A Ctrl-C ends it with the largest value proven to fit so far.
Memory need not grow with the value (allocator thresholds, algorithms chosen by size), so the
trials are checked afterwards for values that fit above one that did not, and for figures that fell
as the value grew: both are reported, never smoothed over.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from memgauge.analysis import select_law
from memgauge.model import FitTrial, NonMonotonic

# a figure that falls by more than this between two larger values is a non-monotonic point (run to
# run noise of a peak or a wall time stays well under it)
NON_MONOTONIC_DROP = 0.05
# above the largest value that fitted, in the upward phase, a guess is allowed at most this factor
# (to the power of the number of values that fitted, less one): a run's time grows with the value
# too, and a law fitted to few points can be far off
_MAX_GROWTH = 4


@dataclass
class SearchResult:
    """``value``: the largest value found that fits with the next one up not fitting (None:
    nothing fits); ``reason``: how the search ended ("boundary", "maximum fits", "nothing fits",
    "too large"); ``laws``: each metric's fitted law as text, over the trials."""

    value: int | None
    reason: str
    trials: list[FitTrial] = field(default_factory=list)
    laws: dict[str, str] = field(default_factory=dict)
    non_monotonic: list[NonMonotonic] = field(default_factory=list)


def crossing(
    trials: list[FitTrial], limits: dict[str, float], upper: float, lower: float = 1.0
) -> float | None:
    """Where the laws fitted to the trials so far first reach a limit, between ``lower`` and
    ``upper`` (``upper`` when none is reached below it, ``lower`` when one is already over there);
    None when no law can be fitted yet (fewer than two values measured)."""
    best: float | None = None
    for metric, limit in limits.items():
        points = [(t.value, t.figures[metric]) for t in trials if metric in t.figures and t.error is None]
        if len({x for x, _ in points}) < 2:
            continue
        growth = select_law([float(x) for x, _ in points], [y for _, y in points])
        if growth is None:
            continue
        law = growth.best
        lo = lower
        if law.predict(lo) > limit:
            at = lo
        elif law.predict(upper) <= limit:
            at = upper
        else:
            a, b = lo, upper
            for _ in range(100):
                mid = (a + b) / 2
                if law.predict(mid) <= limit:
                    a = mid
                else:
                    b = mid
            at = a
        best = at if best is None else min(best, at)
    return best


def laws_of(trials: list[FitTrial], limits: dict[str, float]) -> dict[str, str]:
    out: dict[str, str] = {}
    for metric in limits:
        points = [(t.value, t.figures[metric]) for t in trials if metric in t.figures and t.error is None]
        growth = select_law([float(x) for x, _ in points], [y for _, y in points])
        if growth is not None:
            out[metric] = f"{growth.best.law}: {growth.best.formula()}"
    return out


def non_monotonic(trials: list[FitTrial], limits: dict[str, float]) -> list[NonMonotonic]:
    """Every value that fits above a smaller one that did not, and every value whose figure is
    more than ``NON_MONOTONIC_DROP`` below that of the next smaller value measured (each drop is
    named once, against its neighbour: one high outlier does not flag every value above it)."""
    measured = sorted({t.value: t for t in trials if t.error is None}.values(), key=lambda t: t.value)
    found: list[NonMonotonic] = []
    for i, t in enumerate(measured):
        smaller = measured[:i]
        failed = [s for s in smaller if not s.fits]
        if t.fits and failed:
            found.append(NonMonotonic(t.value, failed[-1].value, "fits", None, None))
        for metric in limits:
            if metric not in t.figures:
                continue
            before = [s for s in smaller if metric in s.figures]
            if not before:
                continue
            prev = before[-1]
            if t.figures[metric] < prev.figures[metric] * (1 - NON_MONOTONIC_DROP):
                found.append(
                    NonMonotonic(t.value, prev.value, metric, t.figures[metric], prev.figures[metric])
                )
    return found


@dataclass
class _Bracket:
    """The search's state: ``good`` the largest value that fitted on the way, ``bad`` the smallest
    that did not above it (None: not found yet)."""

    good: int | None = None
    bad: int | None = None


def closed(good: int, bad: int, tolerance: float) -> bool:
    """Whether the bracket is as narrow as asked: 1 apart, or ``bad`` at most ``tolerance`` (a
    fraction) above ``good``."""
    return bad - good <= max(1, math.floor(good * tolerance))


def search(
    measure: Callable[[int, bool], FitTrial],
    limits: dict[str, float],
    *,
    low: int = 1,
    high: int | None = None,
    start: int | None = None,
    tolerance: float = 0.0,
) -> SearchResult:
    """The largest integer in ``[low, high]`` (``high`` None: unbounded) whose trial fits, found by
    calling ``measure(value, guided)`` once per value tried, starting at ``start`` (default
    ``low``). The answer fits and the smallest value found not to fit above it is at most
    ``tolerance`` (a fraction: 0.03 is 3%) above it, or 1 above it (``tolerance`` 0: exact).
    A KeyboardInterrupt (Ctrl-C) ends the search with reason "interrupted" and the largest value
    proven to fit so far."""
    if high is not None and high < low:
        raise ValueError(f"high={high} is below low={low}")
    if not 0 <= tolerance < 1:
        raise ValueError(f"tolerance={tolerance} is not a fraction in [0, 1)")
    value = low if start is None else min(max(start, low), high if high is not None else start)
    trials: list[FitTrial] = []
    bracket = _Bracket()

    def run(v: int, guided: bool) -> FitTrial:
        t = measure(v, guided)
        trials.append(t)
        return t

    try:
        reason = _search(run, trials, bracket, limits, low, high, value, tolerance)
    except KeyboardInterrupt:
        return _finish(SearchResult(bracket.good, "interrupted", trials), limits)
    return _finish(SearchResult(bracket.good, reason, trials), limits)


def _search(
    run: Callable[[int, bool], FitTrial],
    trials: list[FitTrial],
    bracket: _Bracket,
    limits: dict[str, float],
    low: int,
    high: int | None,
    value: int,
    tolerance: float,
) -> str:
    """The search itself, ``bracket`` kept up to date after each trial (what an interrupt leaves);
    returns how it ended."""
    if run(value, False).fits:
        bracket.good = value
    else:
        bracket.bad = value
    ended = _downwards(run, trials, bracket, limits, low, tolerance)
    ended = ended or _upwards(run, trials, bracket, limits, high)
    if ended is not None:
        return ended
    _between(run, trials, bracket, limits, tolerance)
    good, bad = bracket.good, bracket.bad
    assert good is not None and bad is not None
    return "boundary" if bad - good <= 1 else "tolerance"


def _downwards(
    run: Callable[[int, bool], FitTrial],
    trials: list[FitTrial],
    bracket: _Bracket,
    limits: dict[str, float],
    low: int,
    tolerance: float,
) -> str | None:
    """Downwards until something fits, a bisection after each guess that did not halve the range;
    "nothing fits" where not even ``low`` does."""
    bisect_next = False
    while bracket.good is None:
        bad = bracket.bad
        assert bad is not None
        if bad <= low:
            return "nothing fits"
        width = bad - low
        guess = None if bisect_next else crossing(trials, limits, float(bad), float(low))
        nxt = (low + bad) // 2 if guess is None else math.floor(guess * (1 - tolerance / 2))
        nxt = min(max(nxt, low), bad - 1)
        if run(nxt, guess is not None).fits:
            bracket.good = nxt
        else:
            bracket.bad = nxt
            bisect_next = guess is not None and (nxt - low) * 2 > width
    return None


def _upwards(
    run: Callable[[int, bool], FitTrial],
    trials: list[FitTrial],
    bracket: _Bracket,
    limits: dict[str, float],
    high: int | None,
) -> str | None:
    """Upwards until something does not fit; "maximum fits" or "too large" where nothing stops it."""
    while bracket.bad is None:
        good = bracket.good
        assert good is not None
        if high is not None and good >= high:
            return "maximum fits"
        # each value that fitted more, the law is trusted to reach further: from a batch of 1 a
        # linear need of 1,000 is bracketed in five runs, not in log4(1000)
        fitted = len({t.value for t in trials if t.fits})
        ceiling = good * _MAX_GROWTH ** max(1, fitted - 1) + 1
        if high is not None:
            ceiling = min(ceiling, high)
        # a figure that fell as the value grew: no law to follow upwards, only doubling
        guess = (
            None if non_monotonic(trials, limits) else crossing(trials, limits, float(ceiling), float(good))
        )
        # just above where the law says the limit is crossed: the run most likely to close the bracket
        nxt = max(good * 2, good + 1) if guess is None else math.floor(guess * 1.02) + 1
        nxt = min(max(nxt, good + 1), ceiling)
        if nxt >= 2**62:
            return "too large"
        if run(nxt, guess is not None).fits:
            bracket.good = nxt
        else:
            bracket.bad = nxt
    return None


def _between(
    run: Callable[[int, bool], FitTrial],
    trials: list[FitTrial],
    bracket: _Bracket,
    limits: dict[str, float],
    tolerance: float,
) -> None:
    """Between the two: guided guesses, a bisection after each guess that did not halve the
    bracket; with a tolerance, a guess aims half of it below the crossing, and once it fits the
    value a tolerance above it is tried: where the law holds, that run fails and ends the search."""
    bisect_next = False
    probe_next = False
    while True:
        good, bad = bracket.good, bracket.bad
        assert good is not None and bad is not None  # both found by now
        if closed(good, bad, tolerance):
            return
        width = bad - good
        guess = None
        if probe_next:
            nxt = good + max(1, math.floor(good * tolerance))
        else:
            # the law of the trials near the bracket: one fitted over far values (a batch of 256
            # and one of 80000) can be off here, where allocator steps and caches differ
            near = [t for t in trials if good - width <= t.value <= bad + width]
            guess = None if bisect_next else crossing(near, limits, float(bad), float(good))
            nxt = (good + bad) // 2 if guess is None else math.floor(guess * (1 - tolerance / 2))
        nxt = min(max(nxt, good + 1), bad - 1)
        fits = run(nxt, guess is not None or probe_next).fits
        if fits:
            bracket.good = nxt
        else:
            bracket.bad = nxt
        probe_next = fits and guess is not None and tolerance > 0
        left = bad - nxt if fits else nxt - good  # the bracket's width now
        bisect_next = guess is not None and left * 2 > width


def _finish(result: SearchResult, limits: dict[str, float]) -> SearchResult:
    result.laws = laws_of(result.trials, limits)
    result.non_monotonic = non_monotonic(result.trials, limits)
    return result
