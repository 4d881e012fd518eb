"""Analyses: pure functions over a Profile."""

from memgauge.analysis._summary import PhaseRow, phase_rows, sparkline, top_processes

__all__ = ["PhaseRow", "phase_rows", "sparkline", "top_processes"]
