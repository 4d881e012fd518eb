"""Training throughput across runs (``memgauge compare``): the steady figures side by side, and
each run's speed-up over the first with its noise.

The speed-up is the ratio of steady steps/s (the baseline's mean step time over the run's). Its
noise comes from the spread of the steps: each mean step time has a relative standard error
``sd / sqrt(n) / mean``; the two add in quadrature, and the interval is the ratio times
``1 +- 1.96 x`` that (about 95% for steps that vary independently). An interval that holds 1 is
no speed-up beyond the noise. Pure functions.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memgauge.model import Profile
from memgauge.sections.training._analysis import training_loop
from memgauge.sections.training._record import Training

Z95 = 1.96


@dataclass(frozen=True)
class TrainingComparisonRow:
    """One steady figure across the runs (None: that run has no such figure). ``unit``:
    ``per_second``, ``seconds``, ``share`` or ``flops``, as ``TrainingFigure``'s."""

    label: str
    unit: str
    values: tuple[float | None, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "unit": self.unit, "values": list(self.values)}


@dataclass(frozen=True)
class Speedup:
    """Run ``name``'s steady steps/s over the baseline's, with a ~95% interval from the steps' spread."""

    name: str
    ratio: float
    low: float
    high: float

    @property
    def beyond_noise(self) -> bool:
        return self.low > 1 or self.high < 1

    def sentence(self, baseline: str) -> str:
        head = (
            f"{self.name} vs {baseline}: {self.ratio:.2f}x the steps/s ({self.low:.2f}x to {self.high:.2f}x)"
        )
        if not self.beyond_noise:
            return f"{head}: no change beyond the noise"
        return f"{head}, {'faster' if self.ratio > 1 else 'slower'}"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ratio": self.ratio, "low": self.low, "high": self.high}


@dataclass(frozen=True)
class TrainingComparison:
    rows: tuple[TrainingComparisonRow, ...]
    # one per run after the first; None where either run has too few steady steps
    speedups: tuple[Speedup | None, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": [r.to_dict() for r in self.rows],
            "speedups": [None if s is None else s.to_dict() for s in self.speedups],
        }


_FIGURES = (
    ("steps/s", "per_second", "steps_per_second"),
    ("samples/s", "per_second", "samples_per_second"),
    ("tokens/s", "per_second", "tokens_per_second"),
    ("data wait share", "share", "data_wait_share"),
    ("FLOPs per step", "flops", "flops_per_step"),
    ("MFU", "share", "mfu"),
    ("main loop CPU", "cores", "cpu_main_loop"),
    ("DataLoader workers CPU", "cores", "cpu_workers"),
    ("GPU utilisation", "share", "gpu_utilization"),
)


def steady_seconds(t: Training) -> list[float]:
    return [r.seconds for r in t.rows if r.seconds and not r.warmup and not r.flops_counted]


def speedup(base: Training, run: Training, name: str) -> Speedup | None:
    """``run``'s steady steps/s over ``base``'s; None with fewer than 2 steady steps on a side."""
    a, b = steady_seconds(base), steady_seconds(run)
    if len(a) < 2 or len(b) < 2:
        return None
    mean_a, mean_b = statistics.fmean(a), statistics.fmean(b)
    noise = math.hypot(
        statistics.stdev(a) / math.sqrt(len(a)) / mean_a, statistics.stdev(b) / math.sqrt(len(b)) / mean_b
    )
    ratio = mean_a / mean_b
    return Speedup(name, ratio, ratio * max(0.0, 1 - Z95 * noise), ratio * (1 + Z95 * noise))


def compare_training(profiles: Sequence[Profile], names: Sequence[str]) -> TrainingComparison | None:
    """None when no run has training figures (the comparison is then as it was); a run without a
    step has none (a program with no training loop)."""
    trainings = [training_loop(p) for p in profiles]
    if all(t is None for t in trainings):
        return None
    rows = []
    for label, unit, attr in _FIGURES:
        values = tuple(None if t is None else getattr(t, attr) for t in trainings)
        if any(v is not None for v in values):
            rows.append(
                TrainingComparisonRow(label, unit, tuple(None if v is None else float(v) for v in values))
            )
    base = trainings[0]
    speedups = tuple(
        None if base is None or t is None else speedup(base, t, name)
        for t, name in zip(trainings[1:], names[1:], strict=True)
    )
    return TrainingComparison(tuple(rows), speedups)
