"""Analyses: pure functions over a Profile."""

from memgauge.analysis._advice import Advice, Evidence, advise
from memgauge.analysis._compare import Comparison, ComparisonRow, LineComparison, PhaseComparison, compare
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
    top_processes,
)

__all__ = [
    "Advice",
    "Comparison",
    "ComparisonRow",
    "Evidence",
    "LeakFit",
    "LineComparison",
    "LineRow",
    "PhaseComparison",
    "PhaseRow",
    "PhaseTotal",
    "Rollup",
    "advise",
    "compare",
    "exit_text",
    "leak_suspects",
    "phase_rows",
    "phase_totals",
    "rollup",
    "short_path",
    "sparkline",
    "top_lines",
    "top_processes",
]
