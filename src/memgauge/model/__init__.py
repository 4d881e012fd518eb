"""The records: a run's ``Profile`` and a sweep's ``SweepResult``, each versioned, serialisable
and loaded with its own reader. Nothing else in memgauge defines a persisted record.

Capture and the runner build them, analyses and renderers only read them, the gate judges them and
the service stores them. Plain data only: ``to_dict`` is ``json.dumps``-ready and
``from_dict(to_dict(r)) == r``.
"""

from __future__ import annotations

from memgauge.model._fit import FIT_FORMAT, FitRecord, FitTrial, FitVerification, NonMonotonic
from memgauge.model._gpu import GpuDevice, GpuProcess, GpuWindow
from memgauge.model._profile import (
    READABLE_VERSIONS,
    SCHEMA_VERSION,
    UNBOUNDED_NOTE,
    AllocationPeak,
    Attribution,
    CaptureWarning,
    CpuTimes,
    ExitStatus,
    HeldLine,
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
from memgauge.model._torch import TORCH_ROLES, TorchMemory, TorchModule, TorchOom, TorchStep, TorchTensor
from memgauge.model._training import (
    BOUNDS,
    Training,
    TrainingCounter,
    TrainingProcess,
    TrainingStat,
    TrainingStep,
)

__all__ = [
    "BOUNDS",
    "FIT_FORMAT",
    "READABLE_VERSIONS",
    "SCHEMA_VERSION",
    "SWEEP_FORMAT",
    "TORCH_ROLES",
    "UNBOUNDED_NOTE",
    "AllocationPeak",
    "Attribution",
    "CaptureWarning",
    "Confirmation",
    "CpuTimes",
    "ExitStatus",
    "FitRecord",
    "FitTrial",
    "FitVerification",
    "GpuDevice",
    "GpuProcess",
    "GpuWindow",
    "HeldLine",
    "ImportRecord",
    "LeakSuspect",
    "LineStats",
    "NonMonotonic",
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
    "TorchMemory",
    "TorchModule",
    "TorchOom",
    "TorchStep",
    "TorchTensor",
    "Training",
    "TrainingCounter",
    "TrainingProcess",
    "TrainingStat",
    "TrainingStep",
    "Value",
    "load_profile",
    "load_sweep",
    "metric_names",
]
