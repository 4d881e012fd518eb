"""Scaling sweeps: a program run at many sizes, each point a fresh isolated run, through an engine
(local process pool or Ray). Analyses of the record are in ``memgauge.analysis``."""

from memgauge.sweep._choose import make_engine
from memgauge.sweep._engine import Engine, JobHandle, LocalEngine
from memgauge.sweep._job import Job, JobResult, Resources, execute_job
from memgauge.sweep._params import check_templates, expand, grid, parse_params, parse_predict
from memgauge.sweep._sweep import SweepPlan, SweepProgress, confirm, point_label, run_sweep

__all__ = [
    "Engine",
    "Job",
    "JobHandle",
    "JobResult",
    "LocalEngine",
    "Resources",
    "SweepPlan",
    "SweepProgress",
    "check_templates",
    "confirm",
    "execute_job",
    "expand",
    "grid",
    "make_engine",
    "parse_params",
    "parse_predict",
    "point_label",
    "run_sweep",
]
