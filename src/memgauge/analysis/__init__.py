"""Analyses: pure functions over a Profile."""

from memgauge.analysis._advice import Advice, Evidence, advise
from memgauge.analysis._compare import Comparison, ComparisonRow, LineComparison, PhaseComparison, compare
from memgauge.analysis._leaks import LeakFit, leak_suspects
from memgauge.analysis._lines import LineRow, short_path, top_lines
from memgauge.analysis._rollups import Rollup, rollup
from memgauge.analysis._summary import PhaseRow, exit_text, phase_rows, sparkline, top_processes

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
    "Rollup",
    "advise",
    "compare",
    "exit_text",
    "leak_suspects",
    "phase_rows",
    "rollup",
    "short_path",
    "sparkline",
    "top_lines",
    "top_processes",
]
