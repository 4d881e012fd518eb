"""Phase shares over a sweep: each top-level phase's share of the wall time at each size."""

from __future__ import annotations

from dataclasses import dataclass

from memgauge.analysis._sweep_series import combinations, matches
from memgauge.model import SweepResult, Value


@dataclass(frozen=True)
class PhaseShares:
    """Each top-level phase's share of the wall time (median runs) at each value of ``param``;
    ``other`` is the time in no phase."""

    param: str
    fixed: dict[str, Value]
    xs: tuple[Value, ...]
    phases: tuple[str, ...]
    shares: tuple[tuple[float, ...], ...]  # per x, per phase (same order as ``phases``)
    other: tuple[float, ...]


def phase_shares(result: SweepResult, param: str) -> list[PhaseShares]:
    out: list[PhaseShares] = []
    for fixed in combinations(result, param):
        points = [p for p in result.points if matches(p, fixed) and p.median("wall")]
        names: dict[str, None] = {}
        for p in points:
            for run in p.runs:
                names.update(dict.fromkeys(n for n, ph in run.phases.items() if ph.depth == 0))
        if not points or not names:
            continue
        phases = tuple(names)
        shares: list[tuple[float, ...]] = []
        other: list[float] = []
        for p in points:
            wall = p.median("wall") or 1.0
            row = tuple(min(1.0, (p.median(f"phase:{n}.seconds") or 0.0) / wall) for n in phases)
            shares.append(row)
            other.append(max(0.0, 1.0 - sum(row)))
        out.append(
            PhaseShares(
                param, fixed, tuple(p.params[param] for p in points), phases, tuple(shares), tuple(other)
            )
        )
    return out
