"""Worker scaling: how throughput grows with the number of workers.

Throughput measured at several worker counts (the median of repeated counts) gives
speedup and efficiency relative to the smallest count. The knee is the first count ``w_i`` whose
next step ``w_i → w_{i+1}`` gains less than half of the ideal increase:
``T_{i+1}/T_i - 1 < (w_{i+1}/w_i - 1) / 2``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

SCALING_CRITERION = (
    "The knee is the first worker count after which adding workers gains less than half of the "
    "ideal (linear) increase in throughput."
)


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
