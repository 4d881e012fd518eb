"""The combined peak of many programs under random start offsets, as a distribution (``memgauge
plan``): percentiles, and the probability of exceeding the machine with its uncertainty.

numpy does the work, imported here on first use only (the ``plan`` extra): a plan of 100 members
with 1,000 samples each over 10,000 trials adds about 5 x 10^8 figures, seconds in numpy and
minutes in pure Python. The core, and every measured program, never import it.

The timelines are laid on a common grid: each bin holds the largest sample of a member in it, so
two short peaks in one bin count as overlapping and a figure can only be over-stated, never under-
stated, by the grid. Offsets fall on the grid too. One trial draws one offset per member: a
one-shot member starts at a uniform bin of the window, a repeating one at a uniform phase of its
period; the trial's combined peak is the largest sum over the grid.
"""

from __future__ import annotations

import math

from memgauge._errors import UsageError
from memgauge.analysis._plan import PlanInput
from memgauge.model import PlanDistribution

TYPE_CHECKING = False
if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["simulate", "wilson_interval"]

# the Wilson interval's z for 95%
_Z95 = 1.959963984540054
# trials per block: a block's (trials x bins) sums stay in the CPU's cache
_BLOCK = 256


def wilson_interval(hits: int, trials: int, z: float = _Z95) -> tuple[float, float]:
    """The Wilson score interval of a share ``hits / trials`` (95% by default): honest at 0 and
    at small counts, where the normal approximation gives an interval of width 0."""
    if trials <= 0:
        return 0.0, 1.0
    p = hits / trials
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    return max(0.0, centre - half), min(1.0, centre + half)


def _numpy() -> object:
    try:
        import numpy
    except ImportError:
        raise UsageError("the timeline-aware plan needs numpy: pip install 'memgauge[plan]'") from None
    return numpy


def _envelope(np_: object, member: PlanInput, dt: float, length: int) -> npt.NDArray[np.float32]:
    """The member's memory on the grid, each bin its largest sample."""
    import numpy as np

    out = np.zeros(length, dtype=np.float32)
    t = np.asarray(member.t_seconds, dtype=np.float64)
    v = np.asarray(member.bytes_at, dtype=np.float32)
    ends = np.append(t[1:], member.member.duration_seconds)
    first = np.minimum((t / dt).astype(np.int64), length - 1)
    last = np.minimum(np.maximum(np.ceil(ends / dt).astype(np.int64) - 1, first), length - 1)
    np.maximum.at(out, first, v)
    for k in np.nonzero(last > first)[0]:  # samples longer than a bin: few, by construction
        lo, hi = int(first[k]), int(last[k])
        out[lo : hi + 1] = np.maximum(out[lo : hi + 1], v[k])
    return out


def simulate(
    inputs: list[PlanInput],
    machine_bytes: int,
    *,
    trials: int = 10_000,
    seed: int = 0,
    window_seconds: float | None = None,
    bins: int = 512,
) -> PlanDistribution:
    """The combined peak over ``trials`` random offsets. ``window_seconds``: the span one-shot
    members start in (None: the longest one-shot member's duration, so each may start any time
    while the longest runs); ``bins``: the grid's size over the whole span."""
    _numpy()
    import numpy as np
    from numpy.lib.stride_tricks import sliding_window_view

    if not inputs:
        raise UsageError("nothing to plan")
    if trials < 1:
        raise UsageError("--trials must be at least 1")
    once = [i for i in inputs if not i.member.period_seconds]
    periods = [float(i.member.period_seconds) for i in inputs if i.member.period_seconds]
    longest = max((i.member.duration_seconds for i in once), default=0.0)
    window = longest if window_seconds is None else window_seconds
    horizon = max(window + longest, 2 * max(periods, default=0.0), 1e-6)
    dt = horizon / bins
    window_bins = round(window / dt)
    rng = np.random.default_rng(seed)
    peaks = np.empty(trials, dtype=np.float64)
    # each member's row of a trial is a slice of one padded array: offset o reads from start - o
    layouts: list[tuple[npt.NDArray[np.float32], int, int]] = []  # (padded, start, offsets drawn from)
    for member in inputs:
        m = member.member
        length = max(1, math.ceil(m.duration_seconds / dt))
        env = _envelope(np, member, dt, length)
        if m.period_seconds:
            pb = max(1, round(m.period_seconds / dt))
            cycle = np.zeros(pb, dtype=np.float32)
            np.add.at(cycle, np.arange(length) % pb, env)  # a run longer than its period overlaps itself
            reps = math.ceil((bins + pb) / pb) + 1
            layouts.append((np.tile(cycle, reps), pb, pb))
        else:
            tail = np.zeros(max(0, bins - length), np.float32)
            padded = np.concatenate([np.zeros(bins, np.float32), env, tail])
            layouts.append((padded, bins, window_bins + 1))
    views = [(sliding_window_view(p, bins), start, span) for p, start, span in layouts]
    for lo in range(0, trials, _BLOCK):
        n = min(_BLOCK, trials - lo)
        total = np.zeros((n, bins), dtype=np.float32)
        for view, start, span in views:
            offsets = rng.integers(0, span, size=n)
            total += view[start - offsets]
        peaks[lo : lo + n] = total.max(axis=1)
    over = int(np.count_nonzero(peaks > machine_bytes))
    low, high = wilson_interval(over, trials)
    p50, p99, p999 = np.quantile(peaks, [0.5, 0.99, 0.999], method="higher")
    return PlanDistribution(
        trials=trials,
        seed=seed,
        window_seconds=window,
        grid_seconds=dt,
        p50_bytes=int(p50),
        p99_bytes=int(p99),
        p999_bytes=int(p999),
        max_bytes=int(peaks.max()),
        exceed_count=over,
        exceed_probability=over / trials,
        exceed_low=low,
        exceed_high=high,
    )
