"""Analyses: pure functions over a Profile."""

from memgauge.analysis._advice import Advice, Evidence, advise, is_import_line
from memgauge.analysis._compare import Comparison, ComparisonRow, LineComparison, PhaseComparison, compare
from memgauge.analysis._compare_rows import has_values, ran_repeatedly
from memgauge.analysis._growth import Fit, Growth
from memgauge.analysis._imports import ImportOrder, ImportTotals, import_totals, top_imports
from memgauge.analysis._leaks import LEAK_MIN_SPAN_SECONDS, LeakFit, callers_in, leak_suspects
from memgauge.analysis._lines import LineRow, short_path, top_lines
from memgauge.analysis._predict import Prediction
from memgauge.analysis._report_rows import (
    cpu_cores,
    cpu_lines,
    largest_series,
    longest_phases,
    phase_spans,
    waiting_lines,
)
from memgauge.analysis._rollups import Rollup, rollup
from memgauge.analysis._scaling import Scaling
from memgauge.analysis._summary import (
    PhaseRow,
    PhaseTotal,
    exit_text,
    phase_rows,
    phase_totals,
    sparkline,
    summarize,
    top_processes,
)
from memgauge.analysis._sweep import SweepAnalysis, analyze
from memgauge.analysis._sweep_budget import BudgetRow, budget_metric
from memgauge.analysis._sweep_laws import GrowthRow, PredictionRow
from memgauge.analysis._sweep_rows import (
    exit_summary,
    failed_runs,
    limit_share,
    points_measured,
    run_metrics,
    runner_up,
    share_rows,
    top_phases,
)
from memgauge.analysis._sweep_scaling import ScalingRow
from memgauge.analysis._sweep_series import is_numeric, series, sizes
from memgauge.analysis._sweep_shares import PhaseShares
from memgauge.analysis._torch import (
    ModuleRow,
    RoleComparison,
    RoleRow,
    StepLeak,
    StepRow,
    TensorDiff,
    TensorGroup,
    TorchSummary,
    compare_torch_roles,
    diff_tensors,
    torch_modules,
    torch_roles,
    torch_step_leak,
    torch_steps,
    torch_summary,
)

__all__ = [
    "LEAK_MIN_SPAN_SECONDS",
    "Advice",
    "BudgetRow",
    "Comparison",
    "ComparisonRow",
    "Evidence",
    "Fit",
    "Growth",
    "GrowthRow",
    "ImportOrder",
    "ImportTotals",
    "LeakFit",
    "LineComparison",
    "LineRow",
    "ModuleRow",
    "PhaseComparison",
    "PhaseRow",
    "PhaseShares",
    "PhaseTotal",
    "Prediction",
    "PredictionRow",
    "RoleComparison",
    "RoleRow",
    "Rollup",
    "Scaling",
    "ScalingRow",
    "StepLeak",
    "StepRow",
    "SweepAnalysis",
    "TensorDiff",
    "TensorGroup",
    "TorchSummary",
    "advise",
    "analyze",
    "budget_metric",
    "callers_in",
    "compare",
    "compare_torch_roles",
    "cpu_cores",
    "cpu_lines",
    "diff_tensors",
    "exit_summary",
    "exit_text",
    "failed_runs",
    "has_values",
    "import_totals",
    "is_import_line",
    "is_numeric",
    "largest_series",
    "leak_suspects",
    "limit_share",
    "longest_phases",
    "phase_rows",
    "phase_spans",
    "phase_totals",
    "points_measured",
    "ran_repeatedly",
    "rollup",
    "run_metrics",
    "runner_up",
    "series",
    "share_rows",
    "short_path",
    "sizes",
    "sparkline",
    "summarize",
    "top_imports",
    "top_lines",
    "top_phases",
    "top_processes",
    "torch_modules",
    "torch_roles",
    "torch_step_leak",
    "torch_steps",
    "torch_summary",
    "waiting_lines",
]
