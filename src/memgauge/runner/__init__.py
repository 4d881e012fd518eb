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
    from memgauge.runner._ahead import discard_group_ahead, make_group_ahead
    from memgauge.runner._assemble_sections import SectionInputs
    from memgauge.runner._fit import (
        FitResult,
        Proof,
        Trial,
        default_roots,
        evict_page_cache,
        fit_limit,
        prove_limit,
        quiet_program,
        trial_of,
    )
    from memgauge.runner._inprocess import profile
    from memgauge.runner._options import RunOptions
    from memgauge.runner._overhead import process_started
    from memgauge.runner._runner import run_program
    from memgauge.runner._target import Target, parse_target
    from memgauge.runner._together import run_together

_NAMES = {
    "SectionInputs": "_assemble_sections",
    "discard_group_ahead": "_ahead",
    "make_group_ahead": "_ahead",
    "default_roots": "_fit",
    "evict_page_cache": "_fit",
    "fit_limit": "_fit",
    "FitResult": "_fit",
    "Proof": "_fit",
    "prove_limit": "_fit",
    "quiet_program": "_fit",
    "Trial": "_fit",
    "trial_of": "_fit",
    "HardLimits": "_runner",  # isolation's, as _runner imports it
    "parse_target": "_target",
    "process_started": "_overhead",
    "profile": "_inprocess",
    "run_program": "_runner",
    "RunOptions": "_options",
    "Target": "_target",
    "run_together": "_together",
}
__all__ = [
    "FitResult",
    "HardLimits",
    "Proof",
    "RunOptions",
    "SectionInputs",
    "Target",
    "Trial",
    "default_roots",
    "discard_group_ahead",
    "evict_page_cache",
    "fit_limit",
    "make_group_ahead",
    "parse_target",
    "process_started",
    "profile",
    "prove_limit",
    "quiet_program",
    "run_program",
    "run_together",
    "trial_of",
]
__getattr__, __dir__ = attach(__name__, _NAMES)
