"""Scaling sweeps: a program run at many sizes, each point a fresh isolated run, through an engine
(local process pool or Ray). Analyses of the record are in ``memgauge.analysis``."""

from memgauge.sweep._choose import make_engine
from memgauge.sweep._engine import Engine, JobHandle, LocalEngine
from memgauge.sweep._fit import non_monotonic, search
from memgauge.sweep._fit_knobs import program_value
from memgauge.sweep._fit_run import FitPlan, figures_of, first_value, fit
from memgauge.sweep._job import Job, JobResult, Resources, execute_job
from memgauge.sweep._params import check_templates, expand, grid, parse_params, parse_predict
from memgauge.sweep._predict_fit import predict_gpu, predict_step
from memgauge.sweep._remedies import REMEDIES, RemedyPlan, parse_remedies, run_remedies
from memgauge.sweep._sweep import SweepPlan, SweepProgress, confirm, point_label, run_sweep

__all__ = [
    "REMEDIES",
    "Engine",
    "FitPlan",
    "Job",
    "JobHandle",
    "JobResult",
    "LocalEngine",
    "RemedyPlan",
    "Resources",
    "SweepPlan",
    "SweepProgress",
    "check_templates",
    "confirm",
    "execute_job",
    "expand",
    "figures_of",
    "first_value",
    "fit",
    "grid",
    "make_engine",
    "non_monotonic",
    "parse_params",
    "parse_predict",
    "parse_remedies",
    "point_label",
    "predict_gpu",
    "predict_step",
    "program_value",
    "run_remedies",
    "run_sweep",
    "search",
]
