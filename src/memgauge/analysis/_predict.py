"""Predictions from a growth law (``_growth``): the value at a size ``N0`` with its interval, whether
the data support extrapolating there, and the largest size within a budget.

Predicting. The interval (95% unless asked otherwise) is a prediction interval for one new run at
``N0``. With the design rows ``(1, f(N_i))`` (constant: ``(1)``), ``W = diag(w)`` and
``s² = SSR_w / (n - p)`` (``s``, the relative scatter, raised to at least 0.002, the measurement
floor), the variance of a new run is ``s² · (ŷ0² + x0ᵀ(XᵀWX)⁻¹x0)``: ``ŷ0²`` because the errors are
relative. The half-width is that standard deviation times the two-sided Student-t quantile with
``n - p`` degrees of freedom. For the power law ``k`` is held at its fitted value (the interval is
conditional on it) and ``n - 3`` degrees of freedom are used. With ``n - p ≤ 0`` the interval is
unbounded.

A prediction is flagged as not supported, with the first reason that applies, when: fewer than 3
distinct sizes were measured; fewer than two laws could be compared (too few runs); the interval is
unbounded; the chosen law fits poorly (relative RMS error above 15%, or R² below 0.9 while the RMS
error is above 1%: below that, what R² measures is mostly noise; R² is not used for the constant
law, whose R² is 0 by construction); ``N0`` is beyond the law's reach above the largest size
measured (``reach``: 4 times it with 3 sizes measured, 16 with 4, 64 with 5, 100 from 6 on: a law
three points chose can be far off at 5 times the largest, where a fourth point would have told
the laws apart) or less than a hundredth of the smallest; another law within 2 AICc of the chosen
one predicts a value outside the interval at ``N0`` (the data cannot tell the two apart there); or
the interval is wider than ±50% of the prediction.

The largest size within a budget is the largest N, from the smallest size measured up to a given
bound, such that the high end of the 95% interval stays within the budget at every size from the
smallest measured to N (a conservative answer). A scan over 200 sizes spaced evenly in log N finds
the first size that exceeds the budget, and bisection between it and the last size before it
finds the crossing: the high end need not rise monotonically (values that fall with N, or an
interval that widens faster than the law grows).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from memgauge.analysis._growth import AICC_MARGIN, Fit, Growth
from memgauge.analysis._tdist import t_quantile

# the scatter of relative errors is never below 0.2%: no measurement is better than that
_SCATTER_FLOOR = 0.002
_MAX_RMS = 0.15
_MIN_R2 = 0.9
# below this RMS error the variation R^2 measures is noise, so a low R^2 says nothing about the law
_R2_NOISE = 0.01
_MAX_EXTRAPOLATION = 100.0
# each size measured beyond the first two lets a law reach this many times further
_REACH_PER_SIZE = 4.0
_MAX_HALF_WIDTH = 0.5
_GRID = 200


@dataclass(frozen=True)
class Prediction:
    """The chosen law's value at ``x`` with a prediction interval for one new run. ``low``/``high``
    are filled even when ``supported`` is False; ``reason`` then says why in one sentence."""

    x: float
    value: float
    low: float
    high: float
    law: str
    supported: bool
    reason: str | None


def _interval(fit: Fit, x: float, confidence: float) -> tuple[float, float, float]:
    value = fit.predict(x)
    dof = fit.n - fit.parameters
    if dof <= 0:
        return value, -math.inf, math.inf
    scatter = max(math.sqrt(fit.ssr_w / dof), _SCATTER_FLOOR)
    sw, fm, sff = fit.moments
    leverage = 1.0 / sw
    if fit.law != "constant" and sff > 0:
        leverage += (fit.basis(x) - fm) ** 2 / sff
    half = t_quantile(confidence, dof) * scatter * math.sqrt(value * value + leverage)
    return value, value - half, value + half


def _pct(fraction: float) -> str:
    percent = 100 * fraction
    return f"{percent:.0f}%" if abs(percent) >= 10 else f"{percent:.2g}%"


def _times(ratio: float) -> str:
    return f"{ratio:.0f}" if ratio >= 100 else f"{ratio:.3g}"


def _reason(growth: Growth, x: float, value: float, low: float, high: float) -> str | None:
    best = growth.best
    if growth.distinct_x < 3:
        return f"3 sizes are needed to choose a law; measured {growth.distinct_x}"
    if not math.isfinite(best.aicc) or sum(math.isfinite(f.aicc) for f in growth.candidates) < 2:
        return (
            f"too few runs to compare laws: {best.n} runs at {growth.distinct_x} sizes "
            f"(the {best.law} law was assumed, not chosen)"
        )
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"too few runs for an interval: {best.n} runs for {best.parameters} parameters"
    poor_r2 = best.law != "constant" and best.r2 < _MIN_R2 and best.rms_relative > _R2_NOISE
    if best.rms_relative > _MAX_RMS or poor_r2:
        return f"the best law ({best.law}) fits poorly: R² {best.r2:.2f}, {_pct(best.rms_relative)} RMS error"
    return _out_of_reach(growth, x) or _rival(growth, x, value, low, high) or _too_wide(x, value, low, high)


def _out_of_reach(growth: Growth, x: float) -> str | None:
    """Why ``x`` lies too far above or below the sizes measured to extrapolate to, or None."""
    allowed = reach(growth.distinct_x)
    if x > allowed * growth.x_max:
        ratio = x / growth.x_max if growth.x_max > 0 else math.inf
        return (
            f"N={x:g} is {_times(ratio)}x the largest size measured ({growth.x_max:g}); "
            f"with {growth.distinct_x} sizes measured at most {allowed:g}x is extrapolated"
        )
    if x < growth.x_min / _MAX_EXTRAPOLATION:
        # at or below 0 there is no ratio to state ("1/inf of the smallest size")
        where = f"is 1/{_times(growth.x_min / x)} of" if x > 0 else "is below a hundredth of"
        return (
            f"N={x:g} {where} the smallest size measured ({growth.x_min:g}); "
            f"at most {_MAX_EXTRAPOLATION:g}x below it is extrapolated"
        )
    return None


def _rival(growth: Growth, x: float, value: float, low: float, high: float) -> str | None:
    """A law that fits about as well as the best but predicts outside its interval at ``x``."""
    best = growth.best
    for other in growth.candidates:
        if other.law == best.law or not other.aicc <= best.aicc + AICC_MARGIN:
            continue
        theirs = other.predict(x)
        if not low <= theirs <= high:
            gap = abs(theirs - value) / abs(value) if value != 0 else math.inf
            return (
                f"{best.law} and {other.law} fit about equally well but differ by {_pct(gap)} "
                f"at N={x:g}; measure larger sizes"
            )
    return None


def _too_wide(x: float, value: float, low: float, high: float) -> str | None:
    half = (high - low) / 2
    if half > _MAX_HALF_WIDTH * abs(value):
        width = half / abs(value) if value != 0 else math.inf
        # one decimal where rounding would print "±50%, wider than ±50%"
        shown = _pct(width) if _pct(width) != _pct(_MAX_HALF_WIDTH) else f"{100 * width:.1f}%"
        return f"the interval at N={x:g} is ±{shown}, wider than ±{_pct(_MAX_HALF_WIDTH)}"
    return None


def reach(sizes: int) -> float:
    """How many times the largest size measured a law fitted to ``sizes`` distinct sizes is
    extrapolated to: 4 with 3 sizes, 16 with 4, 64 with 5, 100 from 6 on (1 below 3: none)."""
    if sizes < 3:
        return 1.0
    return min(_MAX_EXTRAPOLATION, _REACH_PER_SIZE ** (sizes - 2))


def predict(growth: Growth, x: float, *, confidence: float = 0.95) -> Prediction:
    """The chosen law's prediction at ``x`` with its prediction interval, and whether the fit supports
    extrapolating there (see the module docstring for the reasons it may not). ValueError when ``x``
    is outside the law's domain (N < 0 for n log n and power)."""
    if not math.isfinite(x):
        raise ValueError(f"N must be finite, not {x}")
    value, low, high = _interval(growth.best, x, confidence)
    reason = _reason(growth, x, value, low, high)
    return Prediction(x, value, low, high, growth.best.law, reason is None, reason)


def largest_within(growth: Growth, limit: float, *, upper: float, integer: bool = True) -> float | None:
    """The largest N from the smallest size measured up to ``upper`` such that, at every size from
    the smallest measured to N, the high end of the 95% prediction interval stays within ``limit``
    (a conservative answer). None when even the smallest size measured does not fit (or no interval
    is available). With ``integer``, N is rounded down to a whole number. Whether the prediction at
    the answer is supported is left to ``predict``."""
    lo = growth.x_min
    if not (math.isfinite(limit) and math.isfinite(upper)):
        raise ValueError("limit and upper must be finite")
    if upper < lo:
        raise ValueError(f"upper={upper:g} is below the smallest size measured ({lo:g})")

    def fits(x: float) -> bool:
        return _interval(growth.best, x, 0.95)[2] <= limit

    if not fits(lo):
        return None
    grid = _grid(lo, upper)
    good = lo
    bad: float | None = None
    # a scan before bisecting: with b < 0 or an interval that widens faster than the law grows,
    # the high bound need not be monotone, and the first crossing is the one that matters
    for x in grid:
        if fits(x):
            good = x
        else:
            bad = x
            break
    good = upper if bad is None else _bisect(fits, good, bad, 0.25 if integer else 0.0)
    return float(math.floor(good)) if integer else good


def _bisect(fits: Callable[[float], bool], good: float, bad: float, step: float) -> float:
    """The largest value found that ``fits`` between ``good`` (fits) and ``bad`` (does not), to
    ``step`` (or a relative 1e-12)."""
    for _ in range(200):
        if bad - good <= max(1e-12 * bad, step):
            break
        mid = (good + bad) / 2
        if fits(mid):
            good = mid
        else:
            bad = mid
    return good


def _grid(lo: float, hi: float) -> list[float]:
    if hi <= lo:
        return [lo]
    if lo > 0:
        return [lo * (hi / lo) ** (i / (_GRID - 1)) for i in range(_GRID)]
    return [lo + (hi - lo) * i / (_GRID - 1) for i in range(_GRID)]
