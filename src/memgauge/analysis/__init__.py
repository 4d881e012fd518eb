"""Analyses: pure functions over a Profile."""

from memgauge.analysis._leaks import LeakFit, leak_suspects
from memgauge.analysis._lines import LineRow, short_path, top_lines
from memgauge.analysis._summary import PhaseRow, phase_rows, sparkline, top_processes

__all__ = [
    "LeakFit",
    "LineRow",
    "PhaseRow",
    "leak_suspects",
    "phase_rows",
    "short_path",
    "sparkline",
    "top_lines",
    "top_processes",
]
