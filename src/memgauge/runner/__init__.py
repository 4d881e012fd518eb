"""Runs a program in a child process under measurement."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgauge.runner._runner import HardLimits, RunOptions, run_program
from memgauge.runner._target import Target, parse_target

if TYPE_CHECKING:
    from memgauge.runner._sandbox import Sandbox, Upload

__all__ = ["HardLimits", "RunOptions", "Sandbox", "Target", "Upload", "parse_target", "run_program"]


def __getattr__(name: str) -> Any:
    # imported on first use: the sandbox module needs dataclasses, whose import (~25 ms) would
    # otherwise delay the start of every measured program
    if name in ("Sandbox", "Upload"):
        from memgauge.runner import _sandbox

        return getattr(_sandbox, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
