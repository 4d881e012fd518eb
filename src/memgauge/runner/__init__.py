"""The runner: measures a program in a child process (``run_program``), or a block of the current
process (``profile``), driving capture, the watcher and isolation and assembling the ``Profile``.
``HardLimits`` (defined by isolation, whose sandbox tightens them) is offered here too, as the
limits ``RunOptions.enforce`` takes.

Lazy, so ``memgauge run`` starts the program before it loads what it needs only afterwards.
"""

from __future__ import annotations

from memgauge._lazy import attach

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.isolation import HardLimits
    from memgauge.runner._inprocess import profile
    from memgauge.runner._runner import RunOptions, run_program
    from memgauge.runner._target import Target, parse_target

_NAMES = {
    "HardLimits": "_runner",  # isolation's, as _runner imports it
    "parse_target": "_target",
    "profile": "_inprocess",
    "run_program": "_runner",
    "RunOptions": "_runner",
    "Target": "_target",
}
__all__ = [
    "HardLimits",
    "RunOptions",
    "Target",
    "parse_target",
    "profile",
    "run_program",
]
__getattr__, __dir__ = attach(__name__, _NAMES)
