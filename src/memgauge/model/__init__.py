"""The records: a run's ``Profile``, a sweep's ``SweepResult``, a fit's ``FitRecord`` and a plan's
``PlanRecord``, each serialisable and loaded with its own reader, each written in the one envelope
(``RecordKind``: a format name and a version, one rule for bumping it) that the gate's verdict and
the other files memgauge writes for later share.

Capture and the runner build them, analyses and renderers only read them, the gate judges them and
the service stores them. Plain data only: ``to_dict`` is ``json.dumps``-ready and
``from_dict(to_dict(r)) == r``.

Lazy, as the faces ``memgauge run`` goes through: a run builds a ``Profile`` and reads no sweep
or fit record, and each record type is a set of dataclasses whose creation costs at import."""

from __future__ import annotations

from memgauge._lazy import attach

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.model._cpu import CpuProcessSeries, CpuUsage
    from memgauge.model._envelope import (
        BUDGETS,
        FIT,
        KINDS,
        MACHINES,
        PLAN,
        PROFILE,
        SWEEP,
        VERDICT,
        RecordKind,
    )
    from memgauge.model._fit import FitRecord, FitTrial, FitVerification, NonMonotonic
    from memgauge.model._lines import HeldLine, ImportRecord, LeakSuspect, LineStats
    from memgauge.model._overhead import AFTER_STEPS, BEFORE_STEPS, Overhead, OwnCpu
    from memgauge.model._plan import (
        MaxCopies,
        PlanDistribution,
        PlanMember,
        PlanRecord,
        PlanRun,
        load_plan,
    )
    from memgauge.model._profile import (
        SCHEMA_VERSION,
        UNBOUNDED_NOTE,
        AllocationPeak,
        Attribution,
        CaptureWarning,
        CpuTimes,
        ExitStatus,
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
        Confirmation,
        PhaseSummary,
        Point,
        RunSummary,
        SweepResult,
        Value,
        load_sweep,
        metric_names,
    )


_NAMES = {
    "CpuProcessSeries": "_cpu",
    "CpuUsage": "_cpu",
    "BUDGETS": "_envelope",
    "FIT": "_envelope",
    "KINDS": "_envelope",
    "MACHINES": "_envelope",
    "PLAN": "_envelope",
    "PROFILE": "_envelope",
    "SWEEP": "_envelope",
    "VERDICT": "_envelope",
    "RecordKind": "_envelope",
    "MaxCopies": "_plan",
    "PlanDistribution": "_plan",
    "PlanMember": "_plan",
    "PlanRecord": "_plan",
    "PlanRun": "_plan",
    "load_plan": "_plan",
    "AFTER_STEPS": "_overhead",
    "BEFORE_STEPS": "_overhead",
    "SCHEMA_VERSION": "_profile",
    "UNBOUNDED_NOTE": "_profile",
    "AllocationPeak": "_profile",
    "Attribution": "_peak",
    "CaptureWarning": "_profile",
    "Confirmation": "_sweep",
    "CpuTimes": "_profile",
    "ExitStatus": "_profile",
    "FitRecord": "_fit",
    "FitTrial": "_fit",
    "FitVerification": "_fit",
    "HeldLine": "_lines",
    "ImportRecord": "_lines",
    "LeakSuspect": "_lines",
    "LineStats": "_lines",
    "NonMonotonic": "_fit",
    "Overhead": "_overhead",
    "OwnCpu": "_overhead",
    "Peak": "_profile",
    "PhaseRecord": "_profile",
    "PhaseSummary": "_sweep",
    "Point": "_sweep",
    "ProcessRecord": "_profile",
    "ProcessSeries": "_profile",
    "Profile": "_profile",
    "Reconciliation": "_profile",
    "RunSummary": "_sweep",
    "SweepResult": "_sweep",
    "Timeline": "_profile",
    "Value": "_sweep",
    "load_profile": "_profile",
    "load_sweep": "_sweep",
    "metric_names": "_sweep",
}

__all__ = [
    "AFTER_STEPS",
    "BEFORE_STEPS",
    "BUDGETS",
    "FIT",
    "KINDS",
    "MACHINES",
    "PLAN",
    "PROFILE",
    "SCHEMA_VERSION",
    "SWEEP",
    "UNBOUNDED_NOTE",
    "VERDICT",
    "AllocationPeak",
    "Attribution",
    "CaptureWarning",
    "Confirmation",
    "CpuProcessSeries",
    "CpuTimes",
    "CpuUsage",
    "ExitStatus",
    "FitRecord",
    "FitTrial",
    "FitVerification",
    "HeldLine",
    "ImportRecord",
    "LeakSuspect",
    "LineStats",
    "MaxCopies",
    "NonMonotonic",
    "Overhead",
    "OwnCpu",
    "Peak",
    "PhaseRecord",
    "PhaseSummary",
    "PlanDistribution",
    "PlanMember",
    "PlanRecord",
    "PlanRun",
    "Point",
    "ProcessRecord",
    "ProcessSeries",
    "Profile",
    "Reconciliation",
    "RecordKind",
    "RunSummary",
    "SweepResult",
    "Timeline",
    "Value",
    "load_plan",
    "load_profile",
    "load_sweep",
    "metric_names",
]
__getattr__, __dir__ = attach(__name__, _NAMES)
