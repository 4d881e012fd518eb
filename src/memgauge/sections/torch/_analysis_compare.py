"""The torch section's part of ``memgauge compare`` (the registry's "compare"): tensor bytes by role
at each run's torch peak, then the total, as the comparison's figure rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memgauge.analysis import ComparisonRow
from memgauge.model import Profile
from memgauge.sections.torch._analysis import compare_torch_roles


@dataclass(frozen=True)
class TorchRoles:
    """The rows, one a role then the total, each with every run's bytes (None: no torch figures)."""

    rows: tuple[ComparisonRow, ...]

    def to_dict(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.rows]


def compare(profiles: Sequence[Profile], names: Sequence[str]) -> TorchRoles | None:
    """None where no run has torch figures: the comparison is then as it was without torch."""
    rows = tuple(
        ComparisonRow(f"torch_{r.role}", r.role.replace("_", " "), "bytes", r.bytes)
        for r in compare_torch_roles(list(profiles))
    )
    return TorchRoles(rows) if rows else None
