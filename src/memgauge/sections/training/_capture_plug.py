"""The training section's part of the torch tracker (the registry's "torch"): a measured run's
loop follows torch's data loading, copies and FLOPs (docs/training.md)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memgauge.sections.torch import Tracker


def connected(tracker: Tracker, torch: Any, directory: str) -> None:
    """Data waits and FLOPs for the throughput figures, in a run memgauge measures."""
    if directory:
        from memgauge.sections.training._capture_torch import attach

        attach(tracker)
