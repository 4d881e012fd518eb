"""Analyses: pure functions over a Profile."""

from memgauge.analysis._advice import Advice, Evidence, advise
from memgauge.analysis._compare import Comparison, ComparisonRow, LineComparison, PhaseComparison, compare
from memgauge.analysis._growth import (
    Fit,
    Growth,
    Prediction,
    Scaling,
)
from memgauge.analysis._leaks import LeakFit, leak_suspects
from memgauge.analysis._lines import LineRow, short_path, top_lines
from memgauge.analysis._rollups import Rollup, rollup
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
from memgauge.analysis._sweep import (
    BudgetRow,
    GrowthRow,
    PhaseShares,
    PredictionRow,
    ScalingRow,
    SweepAnalysis,
    analyze,
    budget_metric,
    is_numeric,
    series,
    sizes,
)

__all__ = [
    "Advice",
    "BudgetRow",
    "Comparison",
    "ComparisonRow",
    "Evidence",
    "Fit",
    "Growth",
    "GrowthRow",
    "LeakFit",
    "LineComparison",
    "LineRow",
    "PhaseComparison",
    "PhaseRow",
    "PhaseShares",
    "PhaseTotal",
    "Prediction",
    "PredictionRow",
    "Rollup",
    "Scaling",
    "ScalingRow",
    "SweepAnalysis",
    "advise",
    "analyze",
    "budget_metric",
    "compare",
    "exit_text",
    "is_numeric",
    "leak_suspects",
    "phase_rows",
    "phase_totals",
    "rollup",
    "series",
    "short_path",
    "sizes",
    "sparkline",
    "summarize",
    "top_lines",
    "top_processes",
]
