"""Worker scaling over a sweep: which parameter counts workers, and throughput against it."""

from __future__ import annotations

from dataclasses import dataclass

from memgauge.analysis._scaling import Scaling, worker_scaling
from memgauge.analysis._sweep_series import series, sizes
from memgauge.model import SweepResult, Value


@dataclass(frozen=True)
class ScalingRow:
    param: str
    metric: str  # the program metric whose rate is the throughput
    fixed: dict[str, Value]
    scaling: Scaling


WORKER_NAMES = (
    "WORKERS",
    "N_WORKERS",
    "NUM_WORKERS",
    "JOBS",
    "N_JOBS",
    "PROCS",
    "PROCESSES",
    "THREADS",
    "N_THREADS",
)


def workers_param(result: SweepResult, explicit: str | None = None) -> str | None:
    """The parameter that counts workers: ``explicit``, else a numeric varied one named like it."""
    if explicit is not None:
        return explicit
    for name in sizes(result):
        if name.upper() in WORKER_NAMES:
            return name
    return None


def scaling(result: SweepResult, param: str, metric: str) -> list[ScalingRow]:
    """Throughput (``metric`` per wall second), speedup, efficiency and the knee against ``param``.
    Runs with no workers or no throughput (a count of 0, a metric of 0) are left out: a speedup
    relative to them is undefined (``scaling_left_out`` counts them)."""
    rows: list[ScalingRow] = []
    for s in series(result, f"throughput:{metric}", param):
        kept = [(x, y) for x, y in zip(s.xs, s.ys, strict=True) if x > 0 and y > 0]
        if len({x for x, _ in kept}) >= 2:
            xs, ys = zip(*kept, strict=True)
            rows.append(ScalingRow(param, metric, s.fixed, worker_scaling(xs, ys)))
    return rows


def scaling_left_out(result: SweepResult, param: str, metric: str) -> int:
    """The runs ``scaling`` leaves out: a worker count or a throughput that is not positive."""
    return sum(
        1
        for s in series(result, f"throughput:{metric}", param)
        for x, y in zip(s.xs, s.ys, strict=True)
        if not (x > 0 and y > 0)
    )
