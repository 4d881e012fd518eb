"""Sweep records built by hand, for the sweep renderers: deterministic, no subprocess.

``synthetic_sweep``: N = 1000..8000 by MODEL = linear, mlp, two runs each, with a resident peak of
30 MiB + 10 KiB per item (a linear law to find), a constant ``load`` phase and a ``fit`` phase that
grows with N, and two confirmations of a budget (one fits, one is over).
``synthetic_worker_sweep``: WORKERS = 1, 2, 4, 8 with throughputs 100, 190, 200, 205 items/s: the
knee is at 2 workers.
"""

from __future__ import annotations

from memgauge.analysis import SweepAnalysis, analyze
from memgauge.model import Confirmation, PhaseSummary, Point, RunSummary, SweepResult

MIB = 1 << 20
KIB = 1 << 10
SIZES = [1000, 2000, 4000, 8000]
MODELS = ["linear", "mlp"]


def _jitter(i: int, repeat: int) -> float:
    """A relative error within ±0.5%, different per point and per repeat, the same every time."""
    return 0.005 * (((i * 7 + repeat * 3) % 5) - 2) / 2


def _run(n: int, model: str, i: int, repeat: int) -> RunSummary:
    rss = round((30 * MIB + n * 10 * KIB) * (1 + _jitter(i, repeat)))
    slope = 2e-4 if model == "linear" else 4e-4
    wall = (0.3 + n * slope) * (1 + _jitter(i + 1, repeat))
    fit_seconds = n * slope * 0.8
    return RunSummary(
        ok=True,
        exit="exit 0",
        rss_bytes=rss,
        wall_seconds=wall,
        cpu_seconds=wall * 0.9,
        phases={
            "load": PhaseSummary(seconds=0.2, peak_bytes=40 * MIB),
            "fit": PhaseSummary(seconds=fit_seconds, peak_bytes=rss),
        },
        metrics={"items": float(n)},
        host="localhost",
    )


def synthetic_sweep(*, confirmations: bool = True) -> SweepResult:
    """``confirmations=False``: without the two confirming runs (which would join the fits)."""
    points = []
    i = 0
    for n in SIZES:
        for model in MODELS:
            points.append(Point({"N": n, "MODEL": model}, [_run(n, model, i, r) for r in range(2)]))
            i += 1
    confirmed = [
        Confirmation(
            {"N": 48000, "MODEL": "linear"},
            "rss",
            30 * MIB + 48000 * 10 * KIB,
            512 * MIB,
            RunSummary(ok=True, exit="exit 0", rss_bytes=30 * MIB + 48000 * 10 * KIB, wall_seconds=9.9),
        ),
        Confirmation(
            {"N": 52000, "MODEL": "mlp"},
            "rss",
            500 * MIB,
            512 * MIB,
            RunSummary(ok=True, exit="exit 0", rss_bytes=30 * MIB + 52000 * 10 * KIB, wall_seconds=21.1),
        ),
    ]
    return SweepResult(
        command=["python", "train.py", "--epochs", "3"],
        params={"N": list(SIZES), "MODEL": list(MODELS)},
        repeat=2,
        engine="local",
        concurrency=1,
        started_at="2025-01-01T00:00:00Z",
        memgauge_version="0.0.0",
        points=points,
        confirmations=confirmed if confirmations else [],
    )


def synthetic_worker_sweep() -> SweepResult:
    points = []
    for workers, throughput in zip([1, 2, 4, 8], [100.0, 190.0, 200.0, 205.0], strict=True):
        wall = 1000.0 / throughput
        run = RunSummary(
            ok=True,
            exit="exit 0",
            rss_bytes=(50 + 20 * workers) * MIB,
            wall_seconds=wall,
            cpu_seconds=wall * min(workers, 2),
            metrics={"items": 1000.0},
        )
        points.append(Point({"WORKERS": workers}, [run]))
    return SweepResult(
        command=["python", "pool.py"],
        params={"WORKERS": [1, 2, 4, 8]},
        repeat=1,
        engine="local",
        concurrency=None,
        points=points,
    )


def synthetic_analysis() -> SweepAnalysis:
    """The analysis of the sweep without its confirming runs, which are added to the record after:
    the analyses stay those of the grid, and the renderers still show the confirmations."""
    result = synthetic_sweep(confirmations=False)
    analysis = analyze(result, predict_at=("N", 80000.0, {}), limits=[("rss", 512 * MIB, "rss=512MiB")])
    result.confirmations.extend(synthetic_sweep().confirmations)
    return analysis


def synthetic_worker_analysis() -> SweepAnalysis:
    return analyze(synthetic_worker_sweep())
