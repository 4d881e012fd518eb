"""The records: a run's ``Profile`` and a sweep's ``SweepResult``, each versioned, serialisable
and loaded with its own reader. Nothing else in memgauge defines a persisted record.

Capture and the runner build them, analyses and renderers only read them, the gate judges them and
the service stores them. Plain data only: ``to_dict`` is ``json.dumps``-ready and
``from_dict(to_dict(r)) == r``.
"""

from __future__ import annotations

from memgauge.model._profile import (
    READABLE_VERSIONS,
    SCHEMA_VERSION,
    UNBOUNDED_NOTE,
    AllocationPeak,
    Attribution,
    CaptureWarning,
    CpuTimes,
    ExitStatus,
    ImportRecord,
    LeakSuspect,
    LineStats,
    Peak,
    PhaseRecord,
    ProcessRecord,
    ProcessSeries,
    Profile,
    Reconciliation,
    Timeline,
    load_profile,
)
from memgauge.model._sweep import (
    SWEEP_FORMAT,
    Confirmation,
    PhaseSummary,
    Point,
    RunSummary,
    SweepResult,
    Value,
    load_sweep,
    metric_names,
)

__all__ = [
    "READABLE_VERSIONS",
    "SCHEMA_VERSION",
    "SWEEP_FORMAT",
    "UNBOUNDED_NOTE",
    "AllocationPeak",
    "Attribution",
    "CaptureWarning",
    "Confirmation",
    "CpuTimes",
    "ExitStatus",
    "ImportRecord",
    "LeakSuspect",
    "LineStats",
    "Peak",
    "PhaseRecord",
    "PhaseSummary",
    "Point",
    "ProcessRecord",
    "ProcessSeries",
    "Profile",
    "Reconciliation",
    "RunSummary",
    "SweepResult",
    "Timeline",
    "Value",
    "load_profile",
    "load_sweep",
    "metric_names",
]
