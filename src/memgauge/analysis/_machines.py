"""Which machine (``memgauge plan --catalogue``): for each shape of a catalogue, the best worker
count within its cores and memory, the rate predicted there from a sweep over the worker count,
the memory at that count, and the cost; and the cheapest shape that reaches a target rate.

The laws, from the sweep's medians per worker count:

- the rate: measured counts are read as measured (between two, linearly); beyond the largest,
  Amdahl's law ``T(w) = T1 w / (1 + s (w - 1))`` with the serial share ``s`` fitted to the
  measured points, flagged as extrapolated with the interval between no further gain (the largest
  count's rate) and linear gain from it (``T(w_max) w / w_max``): what the sweep can and cannot say;
- the memory: ``a + b w`` by least squares (a shared base, a share per worker).

A shape runs at most as many workers as it has cores: more workers than cores share them, and a
CPU-bound worker gains nothing from the share.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from memgauge.analysis._sweep_series import series
from memgauge.model import SweepResult

__all__ = ["MachineChoice", "Shape", "WorkerLaws", "choose_machines", "worker_laws"]


@dataclass(frozen=True)
class Shape:
    """A machine of the user's catalogue; ``price_per_hour`` in the catalogue's currency."""

    name: str
    cores: int
    memory_bytes: int
    price_per_hour: float


@dataclass(frozen=True)
class WorkerLaws:
    """The medians per worker count (``counts``, ``rates`` in items per second, ``memory`` in
    bytes), Amdahl's serial share and the memory law's base and per-worker bytes."""

    metric: str
    counts: tuple[float, ...]
    rates: tuple[float, ...]
    memory: tuple[float, ...]
    serial_share: float
    memory_base: float
    memory_per_worker: float

    def rate(self, w: float) -> tuple[float, float, float, bool]:
        """(rate, low, high, extrapolated) at ``w`` workers."""
        counts, rates = self.counts, self.rates
        if w <= counts[-1]:
            if w <= counts[0]:
                # below the smallest count: Amdahl from it (one worker does 1/w of w's work at best)
                r = rates[0] * (w / counts[0])
                return r, r, r, w < counts[0]
            for i in range(len(counts) - 1):
                w0, w1, r0, r1 = counts[i], counts[i + 1], rates[i], rates[i + 1]
                if w0 <= w <= w1:
                    r = r0 + (r1 - r0) * (w - w0) / (w1 - w0)
                    return r, r, r, False
        top, top_rate = counts[-1], rates[-1]
        t1 = rates[0] * (1 + self.serial_share * (counts[0] - 1)) / counts[0]
        amdahl = t1 * w / (1 + self.serial_share * (w - 1))
        low, high = top_rate, top_rate * w / top
        return min(max(amdahl, low), high), low, high, True

    def memory_at(self, w: float) -> float:
        return self.memory_base + self.memory_per_worker * w


def worker_laws(result: SweepResult, param: str, metric: str) -> WorkerLaws:
    """The laws from a sweep over ``param`` (the worker count) measuring ``metric`` items; needs
    two worker counts or more."""
    rates: dict[float, list[float]] = {}
    memory: dict[float, list[float]] = {}
    for s in series(result, f"throughput:{metric}", param):
        for x, y in zip(s.xs, s.ys, strict=True):
            if x > 0 and y > 0:
                rates.setdefault(x, []).append(y)
    for s in series(result, "rss", param):
        for x, y in zip(s.xs, s.ys, strict=True):
            if x in rates:
                memory.setdefault(x, []).append(y)
    counts = sorted(c for c in rates if c in memory)
    if len(counts) < 2:
        raise ValueError(
            f"the sweep measured {metric} at {len(counts)} worker counts of {param}: two or more are needed"
        )
    r = [statistics.median(rates[c]) for c in counts]
    m = [statistics.median(memory[c]) for c in counts]
    # Amdahl: 1/T(w) = (1/T1) (s + (1 - s)/w), linear in 1/w: fit 1/T = p + q/w, s = p / (p + q)
    xs = [1 / c for c in counts]
    ys = [1 / v for v in r]
    q, p = _line(xs, ys)
    serial = min(1.0, max(0.0, p / (p + q))) if p + q > 0 else 1.0
    b, a = _line(counts, m)
    return WorkerLaws(metric, tuple(counts), tuple(r), tuple(m), serial, a, max(0.0, b))


def _line(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """(slope, intercept) of the least-squares line."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx if sxx else 0.0
    return slope, my - slope * mx


@dataclass(frozen=True)
class MachineChoice:
    """A shape at its best worker count (0: not even one worker fits its memory): the predicted
    ``rate`` (items/s) with ``rate_low``..``rate_high`` and whether it is ``extrapolated`` beyond
    the sweep's counts, the memory at that count, the cost per hour and per million items."""

    shape: Shape
    workers: int
    rate: float
    rate_low: float
    rate_high: float
    extrapolated: bool
    memory_bytes: float
    cost_per_million: float | None
    reaches_target: bool

    @property
    def cost_per_hour(self) -> float:
        return self.shape.price_per_hour


def choose_machines(
    laws: WorkerLaws, shapes: list[Shape], target_rate: float | None = None
) -> tuple[list[MachineChoice], MachineChoice | None]:
    """Every shape at its best worker count, and the cheapest per hour whose predicted rate
    reaches ``target_rate`` (None: the cheapest per million items), its low end too when
    extrapolated (a shape reaches it only if the sweep can vouch for it)."""
    out: list[MachineChoice] = []
    for shape in shapes:
        best: MachineChoice | None = None
        for w in range(1, shape.cores + 1):
            memory = laws.memory_at(w)
            if memory > shape.memory_bytes:
                break
            rate, low, high, extrapolated = laws.rate(w)
            per_million = shape.price_per_hour / (rate * 3600) * 1e6 if rate > 0 else None
            reaches = target_rate is None or low >= target_rate
            choice = MachineChoice(shape, w, rate, low, high, extrapolated, memory, per_million, reaches)
            if best is None or rate > best.rate:
                best = choice
        if best is None:
            best = MachineChoice(shape, 0, 0.0, 0.0, 0.0, False, laws.memory_at(1), None, False)
        out.append(best)
    reaching = [c for c in out if c.workers > 0 and c.reaches_target]
    if target_rate is None:
        cheapest = min(reaching, key=lambda c: c.cost_per_million or float("inf"), default=None)
    else:
        cheapest = min(reaching, key=lambda c: (c.cost_per_hour, -c.rate), default=None)
    return out, cheapest
