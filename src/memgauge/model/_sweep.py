"""The record of a sweep: every point, every run, as plain serialisable data.

A run is distilled from its ``Profile`` (``memgauge.analysis.summarize``) to what sweeps compare:
the resident peak, wall and CPU time, per-phase peaks and durations, and the program's metrics. The profiles
themselves are kept on disk when asked (``--save DIR``); the record names them. Analyses over a
sweep (``analysis/_sweep.py``) are pure functions of this record, so a saved record can be
re-analysed (``memgauge sweep --load``) without running anything again.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memgauge._errors import ProfileFormatError
from memgauge._files import write_output
from memgauge.model._envelope import SWEEP

Value = int | float | str


@dataclass(frozen=True)
class PhaseSummary:
    """One phase name within a run: its records' seconds summed, their peak the highest."""

    seconds: float
    peak_bytes: int
    depth: int = 0


@dataclass
class RunSummary:
    """One run of a point. ``ok``: the program ran and exited 0. ``error``: why it has no
    measurement (memgauge could not run it), else None; a run that failed still has its figures.
    ``rss_bytes``: the tree's resident peak; ``needs_bytes``: what a container needs (0 in records
    before version 3), which the ``rss`` metric is where known, as in every other report."""

    ok: bool
    exit: str
    rss_bytes: int = 0
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0
    phases: dict[str, PhaseSummary] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    profile_path: str | None = None
    host: str = ""
    output_tail: str = ""
    needs_bytes: int = 0

    @property
    def measured(self) -> bool:
        return self.error is None

    def value(self, metric: str) -> float | None:
        """The run's figure for ``metric`` (see ``metric_names``), or None when it has none."""
        if not self.measured:
            return None
        if metric == "rss":
            return float(self.needs_bytes or self.rss_bytes)
        if metric == "wall":
            return self.wall_seconds
        if metric == "cpu":
            return self.cpu_seconds
        kind, _, rest = metric.partition(":")
        if kind == "metric":
            return self.metrics.get(rest)
        if kind == "phase":
            name, _, what = rest.rpartition(".")
            ph = self.phases.get(name)
            if ph is None:
                return None
            return float(ph.peak_bytes) if what == "peak" else ph.seconds if what == "seconds" else None
        if kind == "throughput":
            items = self.metrics.get(rest)
            return items / self.wall_seconds if items is not None and self.wall_seconds > 0 else None
        return None


@dataclass
class Point:
    params: dict[str, Value]
    runs: list[RunSummary] = field(default_factory=list)

    def values(self, metric: str) -> list[float]:
        return [v for r in self.runs if (v := r.value(metric)) is not None]

    def median(self, metric: str) -> float | None:
        values = sorted(self.values(metric))
        if not values:
            return None
        mid = len(values) // 2
        return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


@dataclass
class Confirmation:
    """A run at a size the analysis chose (the largest that fits a budget), to check it:
    ``metric`` (``rss``, ``wall``, ...) was predicted at ``predicted`` against ``limit``."""

    params: dict[str, Value]
    metric: str
    predicted: float
    limit: float
    run: RunSummary

    @property
    def measured(self) -> float | None:
        return self.run.value(self.metric)

    @property
    def fits(self) -> bool | None:
        """None when the run has no figure for the metric (it could not be measured)."""
        value = self.measured
        return None if value is None else value <= self.limit


@dataclass
class SweepResult:
    command: list[str]
    params: dict[str, list[Value]]
    repeat: int
    engine: str
    concurrency: int | None
    started_at: str = ""
    memgauge_version: str = ""
    points: list[Point] = field(default_factory=list)
    complete: bool = True
    confirmations: list[Confirmation] = field(default_factory=list)

    def varied(self) -> list[str]:
        """Parameters with more than one value."""
        return [name for name, values in self.params.items() if len(values) > 1]

    def to_dict(self) -> dict[str, Any]:
        return SWEEP.wrap(asdict(self))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, allow_nan=False)

    def save(self, path: str) -> None:
        """Atomically: the record is rewritten after every run, and an interrupted sweep keeps
        every run that finished."""
        write_output(path, self.to_json(), "sweep record")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SweepResult:
        data = SWEEP.open(data)[1]
        try:
            return cls(
                command=list(data["command"]),
                params={str(k): list(v) for k, v in data["params"].items()},
                repeat=int(data["repeat"]),
                engine=str(data["engine"]),
                concurrency=data.get("concurrency"),
                started_at=str(data.get("started_at", "")),
                memgauge_version=str(data.get("memgauge_version", "")),
                points=[Point(dict(p["params"]), [_run(r) for r in p["runs"]]) for p in data["points"]],
                complete=bool(data.get("complete", True)),
                confirmations=[
                    Confirmation(
                        dict(c["params"]),
                        str(c["metric"]),
                        float(c["predicted"]),
                        float(c["limit"]),
                        _run(c["run"]),
                    )
                    for c in data.get("confirmations", [])
                ],
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ProfileFormatError(f"malformed memgauge sweep record: {e}") from e


def _run(data: dict[str, Any]) -> RunSummary:
    data = dict(data)
    data["phases"] = {k: PhaseSummary(**v) for k, v in data.get("phases", {}).items()}
    # every figure the analyses fit: a NaN or a string in an edited record would otherwise fail
    # deep in a fit, as an internal error
    figures = {
        "rss_bytes": data.get("rss_bytes", 0),
        "needs_bytes": data.get("needs_bytes", 0),
        "wall_seconds": data.get("wall_seconds", 0.0),
        "cpu_seconds": data.get("cpu_seconds", 0.0),
        **{f"metrics.{k}": v for k, v in dict(data.get("metrics", {})).items()},
        **{f"phases.{k}.seconds": ph.seconds for k, ph in data["phases"].items()},
        **{f"phases.{k}.peak_bytes": ph.peak_bytes for k, ph in data["phases"].items()},
    }
    for key, value in figures.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"{key} is not a finite number: {value!r}")
    return RunSummary(**data)


def load_sweep(path: str | os.PathLike[str]) -> SweepResult:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ProfileFormatError(f"cannot read sweep record {path}: {e.strerror or e}") from e
    try:
        data = json.loads(text)
    except ValueError as e:
        raise ProfileFormatError(f"sweep record {path} is not valid JSON: {e}") from e
    return SweepResult.from_dict(data)


def metric_names(result: SweepResult) -> list[str]:
    """Every metric the sweep's runs have: ``rss``, ``wall``, ``cpu``, ``phase:NAME.peak``,
    ``phase:NAME.seconds``, ``metric:NAME`` and ``throughput:NAME`` (NAME per wall second)."""
    names = ["rss", "wall", "cpu"]
    phases: dict[str, None] = {}
    metrics: dict[str, None] = {}
    for point in result.points:
        for run in point.runs:
            phases.update(dict.fromkeys(run.phases))
            metrics.update(dict.fromkeys(run.metrics))
    for name in phases:
        names += [f"phase:{name}.peak", f"phase:{name}.seconds"]
    for name in metrics:
        names += [f"metric:{name}", f"throughput:{name}"]
    return names
