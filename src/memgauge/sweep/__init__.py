"""Scaling sweeps: a program run at many sizes, each point a fresh isolated run, through an engine
(local process pool or Ray). Analyses of the record are in ``memgauge.analysis``."""

from memgauge.runner._sandbox import Sandbox, Upload
from memgauge.sweep._engine import Engine, JobHandle, LocalEngine, make_engine
from memgauge.sweep._job import Job, JobResult, Resources, execute_job
from memgauge.sweep._model import (
    Confirmation,
    PhaseSummary,
    Point,
    RunSummary,
    SweepResult,
    load_sweep,
    metric_names,
    summarize,
)
from memgauge.sweep._params import parse_params, parse_predict
from memgauge.sweep._sweep import SweepPlan, SweepProgress, confirm, point_label, run_sweep

__all__ = [
    "Confirmation",
    "Engine",
    "Job",
    "JobHandle",
    "JobResult",
    "LocalEngine",
    "PhaseSummary",
    "Point",
    "Resources",
    "RunSummary",
    "Sandbox",
    "SweepPlan",
    "SweepProgress",
    "SweepResult",
    "Upload",
    "confirm",
    "execute_job",
    "load_sweep",
    "make_engine",
    "metric_names",
    "parse_params",
    "parse_predict",
    "point_label",
    "run_sweep",
    "summarize",
]
