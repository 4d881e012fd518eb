"""Growth laws for scaling sweeps: how memory or time grows with the problem size N.

A sweep runs a program at several sizes; each run is one observation (N, y), and repeated runs at
one size are separate observations. Five laws are fitted, each of the form ``y = a + b·f(N)``:
constant (``f = 0``), linear (``f = N``), n log n (``f = N·ln N``, natural log), quadratic
(``f = N²``) and power (``f = N^k`` with the exponent ``k`` fitted too). Laws that need ``N > 0``
(n log n, power) are not fitted when some N is 0 or negative.

Fitting. Least squares on relative errors: observation i has the weight ``w_i = 1 / y_i²``, since
memory and time span orders of magnitude and an error of 1 MiB matters at 10 MiB, not at 10 GiB.
Where some y is 0 or negative the weight is ``1 / max(|y_i|, floor)²`` with
``floor = 1e-9 · max|y|`` (1 when every y is 0), and the same denominator is used for the relative
RMS error. The constant law is the weighted mean; the other laws with a fixed ``f`` are solved in
closed form. The power law is profiled over ``k``: every ``k`` from 0.05 to 4 in steps of 0.01 is
tried, the one with the smallest weighted squared residuals ``SSR_w = Σ w_i (y_i - ŷ_i)²`` is kept
and refined by golden-section search within ±0.01 to 1e-4. ``r2`` is the weighted R²,
``1 - SSR_w / SST_w`` around the weighted mean.

Choosing a law. Each law with ``p`` parameters (constant 1; linear, n log n, quadratic 2; power 3)
fitted to ``n`` observations gets the corrected Akaike criterion
``AICc = n·ln(SSR_w / n) + 2p + 2p(p + 1) / (n - p - 1)``, where ``SSR_w`` is first raised to at
least ``n · 0.001²`` (0.1% relative RMS error: no memory or time measurement is better than that, and
a perfect fit would otherwise score minus infinity). A law is compared only when ``n - p - 1 > 0``
and at least ``p + 1`` distinct sizes were measured; otherwise its AICc is infinite (it is still
listed when at least ``p`` observations at ``p`` distinct sizes let it be fitted at all). The lowest
AICc wins, except that among the laws within 2 of the lowest the one with the fewest parameters is
chosen, ties going to the first in the order above: a simpler law that the data support about as
well is preferred. When fewer than two laws can be compared, nothing was compared: the linear law
is assumed (the constant law when even that cannot be fitted).

Predicting. The interval (95% unless asked otherwise) is a prediction interval for one new run at
``N0``. With the design
rows ``(1, f(N_i))`` (constant: ``(1)``), ``W = diag(w)`` and ``s² = SSR_w / (n - p)`` (``s``, the
relative scatter, raised to at least 0.002, the measurement floor), the variance of a new run is
``s² · (ŷ0² + x0ᵀ(XᵀWX)⁻¹x0)``: ``ŷ0²`` because the errors are relative. The half-width is that
standard deviation times the two-sided Student-t quantile with ``n - p`` degrees of freedom. For the
power law ``k`` is held at its fitted value (the interval is conditional on it) and ``n - 3``
degrees of freedom are used. With ``n - p ≤ 0`` the interval is unbounded.

A prediction is flagged as not supported, with the first reason that applies, when: fewer than 3
distinct sizes were measured; fewer than two laws could be compared (too few runs); the interval is
unbounded; the chosen law fits poorly (relative RMS error above 15%, or R² below 0.9 while the RMS
error is above 1%: below that, what R² measures is mostly noise; R² is not used for the constant
law, whose R² is 0 by construction); ``N0`` is more than 100 times the largest size measured or
less than a hundredth of the smallest; another law within 2 AICc of the chosen one predicts a value
outside the interval at ``N0`` (the data cannot tell the two apart there); or the interval is wider
than ±50% of the prediction.

The largest size within a budget is the largest N, from the smallest size measured up to a given
bound, such that the high end of the 95% interval stays within the budget at every size from the
smallest measured to N (a conservative answer). A scan over 200 sizes spaced evenly in log N finds
the first size that exceeds the budget, and bisection between it and the last size before it
finds the crossing: the high end need not rise monotonically (values that fall with N, or an
interval that widens faster than the law grows).

Worker scaling. Throughput measured at several worker counts (the median of repeated counts) gives
speedup and efficiency relative to the smallest count. The knee is the first count ``w_i`` whose
next step ``w_i → w_{i+1}`` gains less than half of the ideal increase:
``T_{i+1}/T_i - 1 < (w_{i+1}/w_i - 1) / 2``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

LAWS: tuple[str, ...] = ("constant", "linear", "n log n", "quadratic", "power")

_PARAMETERS = {"constant": 1, "linear": 2, "n log n": 2, "quadratic": 2, "power": 3}
# no memory or time measurement is better than 0.1% (AICc) / 0.2% (interval scatter)
_SSR_FLOOR = 1e-3
_SCATTER_FLOOR = 0.002
_AICC_MARGIN = 2.0
_K_MIN = 0.05
_K_MAX = 4.0
_K_STEP = 0.01
_K_TOL = 1e-4
_MAX_RMS = 0.15
_MIN_R2 = 0.9
# below this RMS error the variation R^2 measures is noise, so a low R^2 says nothing about the law
_R2_NOISE = 0.01
_MAX_EXTRAPOLATION = 100.0
_MAX_HALF_WIDTH = 0.5
_GRID = 200

CRITERION = (
    "The law with the lowest AICc on relative errors is chosen, except that among the laws within 2 "
    "AICc of it the one with the fewest parameters wins (ties in the order constant, linear, "
    "n log n, quadratic, power)."
)
SCALING_CRITERION = (
    "The knee is the first worker count after which adding workers gains less than half of the "
    "ideal (linear) increase in throughput."
)


@dataclass(frozen=True)
class Fit:
    """``y = a + b·f(N)`` fitted by relative least squares. ``k`` is the power law's exponent.
    ``ssr_w`` is the weighted sum of squared residuals (not floored)."""

    law: str
    a: float
    b: float
    k: float | None
    parameters: int
    n: int
    rms_relative: float
    r2: float
    aicc: float
    ssr_w: float = 0.0
    # (Σw, weighted mean of f, Σw·(f - mean)²): enough for x0ᵀ(XᵀWX)⁻¹x0 in centred form, which
    # stays accurate where the raw normal equations would cancel (f = N² at N = 1e7)
    moments: tuple[float, float, float] = field(default=(1.0, 0.0, 0.0), repr=False)

    def basis(self, x: float) -> float:
        """``f(x)`` of this law."""
        return _basis(self.law, x, self.k)

    def predict(self, x: float) -> float:
        return self.a + self.b * self.basis(x)

    def formula(self) -> str:
        """The fitted law as text, numbers in %.4g form: ``"1.2e+07 + 1049·N"``."""
        a = f"{self.a:.4g}"
        if self.law == "constant":
            return a
        term = {
            "linear": "N",
            "n log n": "N log N",
            "quadratic": "N^2",
            "power": f"N^{self.k if self.k is not None else float('nan'):.3g}",
        }[self.law]
        sign = "-" if self.b < 0 else "+"
        return f"{a} {sign} {abs(self.b):.4g}·{term}"


@dataclass(frozen=True)
class Growth:
    """The chosen law, every law that could be fitted (lowest AICc first), and the sizes measured."""

    best: Fit
    candidates: tuple[Fit, ...]
    distinct_x: int
    criterion: str
    x_min: float = 0.0
    x_max: float = 0.0


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


@dataclass(frozen=True)
class ScalingPoint:
    workers: float
    throughput: float
    speedup: float
    efficiency: float


@dataclass(frozen=True)
class Scaling:
    """Throughput by worker count, smallest count first; ``knee`` is None while adding workers
    still pays at the largest count measured."""

    points: tuple[ScalingPoint, ...]
    knee: float | None
    criterion: str


def _basis(law: str, x: float, k: float | None) -> float:
    if law == "constant":
        return 0.0
    if law == "linear":
        return x
    if law == "quadratic":
        return x * x
    if x < 0:
        raise ValueError(f"the {law} law is defined for N >= 0, not N={x:g}")
    if law == "n log n":
        # the limit of N·ln N at 0
        return x * math.log(x) if x > 0 else 0.0
    if law == "power":
        assert k is not None
        return math.pow(x, k)
    raise ValueError(f"unknown law {law!r}; expected one of {', '.join(LAWS)}")


def _checked(xs: Sequence[float], ys: Sequence[float]) -> tuple[list[float], list[float]]:
    if len(xs) != len(ys):
        raise ValueError(f"{len(xs)} sizes but {len(ys)} values")
    fx = [float(x) for x in xs]
    fy = [float(y) for y in ys]
    if not all(math.isfinite(v) for v in fx + fy):
        raise ValueError("sizes and values must be finite")
    return fx, fy


def _scales(ys: Sequence[float]) -> list[float]:
    """The denominator of each relative error."""
    top = max((abs(y) for y in ys), default=0.0)
    floor = 1e-9 * top if top > 0 else 1.0
    return [max(abs(y), floor) for y in ys]


@dataclass(frozen=True)
class _Linear:
    a: float
    b: float
    ssr: float
    moments: tuple[float, float, float]


def _solve(fs: Sequence[float], ys: Sequence[float], ws: Sequence[float], slope: bool) -> _Linear | None:
    sw = sum(ws)
    ym = sum(w * y for w, y in zip(ws, ys, strict=True)) / sw
    if not slope:
        ssr = sum(w * (y - ym) ** 2 for w, y in zip(ws, ys, strict=True))
        return _Linear(ym, 0.0, ssr, (sw, 0.0, 0.0))
    fm = sum(w * f for w, f in zip(ws, fs, strict=True)) / sw
    # centred sums: the raw normal equations lose every digit when f spans 1e4..1e14
    sff = sum(w * (f - fm) ** 2 for w, f in zip(ws, fs, strict=True))
    if not sff > 0 or not math.isfinite(sff):
        return None
    sfy = sum(w * (f - fm) * (y - ym) for w, f, y in zip(ws, fs, ys, strict=True))
    b = sfy / sff
    a = ym - b * fm
    ssr = sum(w * (y - a - b * f) ** 2 for w, f, y in zip(ws, fs, ys, strict=True))
    return _Linear(a, b, ssr, (sw, fm, sff))


def _powers(xs: Sequence[float], k: float) -> list[float] | None:
    try:
        fs = [math.pow(x, k) for x in xs]
    except OverflowError:
        return None
    return fs if all(math.isfinite(f) for f in fs) else None


def _fit_power(xs: Sequence[float], ys: Sequence[float], ws: Sequence[float]) -> tuple[float, _Linear] | None:
    def at(k: float) -> _Linear | None:
        fs = _powers(xs, k)
        return None if fs is None else _solve(fs, ys, ws, slope=True)

    def ssr(k: float) -> float:
        fit = at(k)
        return math.inf if fit is None else fit.ssr

    best_k, best_ssr = math.nan, math.inf
    steps = round((_K_MAX - _K_MIN) / _K_STEP)
    for i in range(steps + 1):
        # integer hundredths keep grid points such as 1.5 and 2.0 exact
        k = (round(_K_MIN * 100) + i) / 100
        value = ssr(k)
        if value < best_ssr:
            best_k, best_ssr = k, value
    if not math.isfinite(best_ssr):
        return None
    lo, hi = max(_K_MIN, best_k - _K_STEP), min(_K_MAX, best_k + _K_STEP)
    ratio = (math.sqrt(5) - 1) / 2
    c, d = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fc, fd = ssr(c), ssr(d)
    while hi - lo > _K_TOL:
        if fc < fd:
            hi, d, fd = d, c, fc
            c = hi - ratio * (hi - lo)
            fc = ssr(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + ratio * (hi - lo)
            fd = ssr(d)
    refined = (lo + hi) / 2
    # golden section assumes one minimum in the bracket; never return worse than the grid point
    k = refined if ssr(refined) < best_ssr else best_k
    fit = at(k)
    return None if fit is None else (k, fit)


def _aicc(ssr: float, n: int, p: int) -> float:
    ssr = max(ssr, n * _SSR_FLOOR**2)
    return n * math.log(ssr / n) + 2 * p + 2 * p * (p + 1) / (n - p - 1)


def fit_law(law: str, xs: Sequence[float], ys: Sequence[float]) -> Fit | None:
    """``law`` fitted to the observations, or None when it cannot be: fewer observations or distinct
    sizes than parameters, or a law that needs N > 0 with some N <= 0."""
    if law not in _PARAMETERS:
        raise ValueError(f"unknown law {law!r}; expected one of {', '.join(LAWS)}")
    fx, fy = _checked(xs, ys)
    p = _PARAMETERS[law]
    n = len(fx)
    distinct = len(set(fx))
    if n < p or distinct < p or n == 0:
        return None
    if law in ("n log n", "power") and min(fx) <= 0:
        return None
    scales = _scales(fy)
    ws = [1.0 / s**2 for s in scales]
    k: float | None = None
    solved: _Linear | None
    if law == "power":
        power = _fit_power(fx, fy, ws)
        if power is None:
            return None
        k, solved = power
    else:
        solved = _solve([_basis(law, x, None) for x in fx], fy, ws, slope=law != "constant")
    if solved is None:
        return None
    a, b = solved.a, solved.b
    residuals = [(y - a - b * _basis(law, x, k)) / s for x, y, s in zip(fx, fy, scales, strict=True)]
    rms = math.sqrt(sum(r * r for r in residuals) / n)
    ym = sum(w * y for w, y in zip(ws, fy, strict=True)) / sum(ws)
    sst = sum(w * (y - ym) ** 2 for w, y in zip(ws, fy, strict=True))
    # all values equal: nothing to explain, so only an exact fit counts as explaining it
    r2 = 1.0 - solved.ssr / sst if sst > 0 else (1.0 if solved.ssr == 0 else 0.0)
    eligible = n - p - 1 > 0 and distinct >= p + 1
    aicc = _aicc(solved.ssr, n, p) if eligible else math.inf
    return Fit(law, a, b, k, p, n, rms, r2, aicc, solved.ssr, solved.moments)


def select_law(xs: Sequence[float], ys: Sequence[float]) -> Growth | None:
    """Every law fitted and the best chosen (see the module docstring); None with fewer than 2
    observations or 2 distinct sizes."""
    fx, fy = _checked(xs, ys)
    distinct = len(set(fx))
    if len(fx) < 2 or distinct < 2:
        return None
    fits = [f for f in (fit_law(law, fx, fy) for law in LAWS) if f is not None]
    candidates = tuple(sorted(fits, key=lambda f: (f.aicc, LAWS.index(f.law))))
    eligible = [f for f in candidates if math.isfinite(f.aicc)]
    if len(eligible) >= 2:
        lowest = eligible[0].aicc
        close = [f for f in eligible if f.aicc <= lowest + _AICC_MARGIN]
        best = min(close, key=lambda f: (f.parameters, LAWS.index(f.law)))
        criterion = CRITERION
    else:
        by_law = {f.law: f for f in candidates}
        best = by_law.get("linear") or by_law["constant"]
        criterion = (
            f"Too few observations to compare laws ({len(fx)} runs at {distinct} sizes); "
            f"the {best.law} law is assumed."
        )
    return Growth(best, candidates, distinct, criterion, min(fx), max(fx))


def _betacf(a: float, b: float, x: float) -> float:
    # Lentz's continued fraction for the incomplete beta function (Numerical Recipes, 6.4)
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _beta_regularized(a: float, b: float, x: float) -> float:
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    # the continued fraction converges fast only on this side; use the symmetry on the other
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_quantile(confidence: float, dof: float) -> float:
    """``t`` with ``P(|T| <= t) = confidence`` for Student's t with ``dof`` degrees of freedom."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), not {confidence}")
    if not dof > 0:
        raise ValueError(f"degrees of freedom must be positive, not {dof}")
    tail = 1.0 - confidence

    # P(|T| > t) = I_{dof/(dof+t²)}(dof/2, 1/2), falling from 1 at t = 0
    def outside(t: float) -> float:
        return _beta_regularized(dof / 2.0, 0.5, dof / (dof + t * t))

    lo, hi = 0.0, 1.0
    while outside(hi) > tail:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if outside(mid) > tail:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return (lo + hi) / 2


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
    if x > _MAX_EXTRAPOLATION * growth.x_max:
        ratio = x / growth.x_max if growth.x_max > 0 else math.inf
        return (
            f"N={x:g} is {_times(ratio)}x the largest size measured ({growth.x_max:g}); "
            f"at most {_MAX_EXTRAPOLATION:g}x is extrapolated"
        )
    if x < growth.x_min / _MAX_EXTRAPOLATION:
        # at or below 0 there is no ratio to state ("1/inf of the smallest size")
        where = f"is 1/{_times(growth.x_min / x)} of" if x > 0 else "is below a hundredth of"
        return (
            f"N={x:g} {where} the smallest size measured ({growth.x_min:g}); "
            f"at most {_MAX_EXTRAPOLATION:g}x below it is extrapolated"
        )
    for other in growth.candidates:
        if other.law == best.law or not other.aicc <= best.aicc + _AICC_MARGIN:
            continue
        theirs = other.predict(x)
        if not low <= theirs <= high:
            gap = abs(theirs - value) / abs(value) if value != 0 else math.inf
            return (
                f"{best.law} and {other.law} fit about equally well but differ by {_pct(gap)} "
                f"at N={x:g}; measure larger sizes"
            )
    half = (high - low) / 2
    if half > _MAX_HALF_WIDTH * abs(value):
        width = half / abs(value) if value != 0 else math.inf
        # one decimal where rounding would print "±50%, wider than ±50%"
        shown = _pct(width) if _pct(width) != _pct(_MAX_HALF_WIDTH) else f"{100 * width:.1f}%"
        return f"the interval at N={x:g} is ±{shown}, wider than ±{_pct(_MAX_HALF_WIDTH)}"
    return None


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
    if bad is None:
        good = upper
    else:
        for _ in range(200):
            if bad - good <= max(1e-12 * bad, 0.25 if integer else 0.0):
                break
            mid = (good + bad) / 2
            if fits(mid):
                good = mid
            else:
                bad = mid
    return float(math.floor(good)) if integer else good


def _grid(lo: float, hi: float) -> list[float]:
    if hi <= lo:
        return [lo]
    if lo > 0:
        return [lo * (hi / lo) ** (i / (_GRID - 1)) for i in range(_GRID)]
    return [lo + (hi - lo) * i / (_GRID - 1) for i in range(_GRID)]


def worker_scaling(workers: Sequence[float], throughputs: Sequence[float]) -> Scaling:
    """Speedup, efficiency and the knee of throughput against worker count (see the module
    docstring). Repeated counts are reduced to their median throughput."""
    if len(workers) != len(throughputs):
        raise ValueError(f"{len(workers)} worker counts but {len(throughputs)} throughputs")
    by_count: dict[float, list[float]] = {}
    for count, throughput in zip(workers, throughputs, strict=True):
        w, t = float(count), float(throughput)
        if not (math.isfinite(w) and math.isfinite(t)):
            raise ValueError("worker counts and throughputs must be finite")
        if w <= 0 or t <= 0:
            raise ValueError("worker counts and throughputs must be positive")
        by_count.setdefault(w, []).append(t)
    counts = sorted(by_count)
    medians = [statistics.median(by_count[w]) for w in counts]
    if not counts:
        return Scaling((), None, SCALING_CRITERION)
    w0, t0 = counts[0], medians[0]
    points = tuple(
        ScalingPoint(w, t, t / t0, (t / t0) / (w / w0)) for w, t in zip(counts, medians, strict=True)
    )
    knee: float | None = None
    for i in range(len(counts) - 1):
        gain = medians[i + 1] / medians[i] - 1
        ideal = counts[i + 1] / counts[i] - 1
        if gain < ideal / 2:
            knee = counts[i]
            break
    return Scaling(points, knee, SCALING_CRITERION)
