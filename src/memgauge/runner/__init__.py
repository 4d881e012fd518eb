"""Runs a program in a child process under measurement."""

from memgauge.runner._runner import HardLimits, RunOptions, run_program
from memgauge.runner._target import Target, parse_target

__all__ = ["HardLimits", "RunOptions", "Target", "parse_target", "run_program"]
