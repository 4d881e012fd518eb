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

What a chosen law predicts, with its interval and when a prediction is not supported, and the
largest size within a budget: ``_predict``. Worker scaling: ``_scaling``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

LAWS: tuple[str, ...] = ("constant", "linear", "n log n", "quadratic", "power")

_PARAMETERS = {"constant": 1, "linear": 2, "n log n": 2, "quadratic": 2, "power": 3}
# no memory or time measurement is better than 0.1% (the floor of SSR_w in AICc)
_SSR_FLOOR = 1e-3
# laws within this much AICc of the lowest are about as well supported by the data
AICC_MARGIN = 2.0
_K_MIN = 0.05
_K_MAX = 4.0
_K_STEP = 0.01
_K_TOL = 1e-4

CRITERION = (
    "The law with the lowest AICc on relative errors is chosen, except that among the laws within 2 "
    "AICc of it the one with the fewest parameters wins (ties in the order constant, linear, "
    "n log n, quadratic, power)."
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
    # math.fsum, not sum: exactly rounded, so a fit is the same on every Python (sum() compensates
    # its rounding from 3.12 on only, which turned 3.11's -5.6e-17 intercepts into 0)
    sw = math.fsum(ws)
    ym = math.fsum(w * y for w, y in zip(ws, ys, strict=True)) / sw
    if not slope:
        ssr = math.fsum(w * (y - ym) ** 2 for w, y in zip(ws, ys, strict=True))
        return _Linear(ym, 0.0, ssr, (sw, 0.0, 0.0))
    fm = math.fsum(w * f for w, f in zip(ws, fs, strict=True)) / sw
    # centred sums: the raw normal equations lose every digit when f spans 1e4..1e14
    sff = math.fsum(w * (f - fm) ** 2 for w, f in zip(ws, fs, strict=True))
    if not sff > 0 or not math.isfinite(sff):
        return None
    sfy = math.fsum(w * (f - fm) * (y - ym) for w, f, y in zip(ws, fs, ys, strict=True))
    b = sfy / sff
    a = ym - b * fm
    ssr = math.fsum(w * (y - a - b * f) ** 2 for w, f, y in zip(ws, fs, ys, strict=True))
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
    rms = math.sqrt(math.fsum(r * r for r in residuals) / n)
    ym = math.fsum(w * y for w, y in zip(ws, fy, strict=True)) / math.fsum(ws)
    sst = math.fsum(w * (y - ym) ** 2 for w, y in zip(ws, fy, strict=True))
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
        close = [f for f in eligible if f.aicc <= lowest + AICC_MARGIN]
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
