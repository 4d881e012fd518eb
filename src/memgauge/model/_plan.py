"""The record of ``memgauge plan``: will these programs fit one machine together, by the worst case
and by their memory timelines combined under random start offsets, and the runs that verified it
(docs/plan.md).

Written in the envelope every record has (``_envelope.py``): ``{"format": "memgauge-plan", "version":
2, ...}``. A reader takes every version up to the current one and refuses a newer one with one
line.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any

from memgauge._errors import ProfileFormatError, TargetNotFoundError
from memgauge.model._envelope import PLAN

__all__ = [
    "MaxCopies",
    "PlanDistribution",
    "PlanMember",
    "PlanRecord",
    "PlanRun",
    "load_plan",
]


@dataclass(frozen=True)
class PlanMember:
    """One program on the machine (each of ``--copies`` copies is a member of its own).

    ``need_bytes``: what its container needs (the profile's ``peak.needs_bytes``, else its resident
    peak); ``kernel_bytes``: what the kernel keeps on top per memory group (docs/plan.md);
    ``peak_at_seconds``: when its timeline peaked, from its start; ``duration_seconds``: its wall time;
    ``period_seconds``: it starts again every so often (None: runs once); ``command``: how to run it
    again (``--verify``)."""

    name: str
    source: str
    command: list[str]
    need_bytes: int
    kernel_bytes: int
    peak_at_seconds: float
    duration_seconds: float
    period_seconds: float | None = None


@dataclass(frozen=True)
class PlanDistribution:
    """The combined peak over ``trials`` random start offsets: each one-shot member starts at a
    uniform time in ``[0, window_seconds]``, each repeating one at a uniform phase of its period;
    the timelines are laid on a grid of ``grid_seconds`` bins, each bin holding the largest sample in
    it (so a figure can only be over-stated by the grid). ``exceed_*``: how many trials went over the
    machine, that share, and its 95% Wilson interval."""

    trials: int
    seed: int
    window_seconds: float
    grid_seconds: float
    p50_bytes: int
    p99_bytes: int
    p999_bytes: int
    max_bytes: int
    exceed_count: int
    exceed_probability: float
    exceed_low: float
    exceed_high: float


@dataclass(frozen=True)
class PlanRun:
    """One verifying run: every member started at its offset (``offsets_seconds``, member order),
    each its own child, all in one fresh memory group limited to ``limit_bytes``, caches cold.
    ``label``: "worst" (peaks aligned), "given" (the plan's offsets) or "random N"; ``survived``: no
    process OOM-killed and every one exited 0; ``slowdown``: the largest wall time over the member's
    own (its profile's); ``predicted_bytes``: the plan's figure at these offsets; ``limit_hits``:
    the group's ``failcnt``; ``peak_bytes``: its high-water mark."""

    label: str
    copies: int
    offsets_seconds: list[float]
    limit_bytes: int
    survived: bool
    oom_kills: int
    limit_hits: int
    peak_bytes: int
    wall_seconds: float
    slowdown: float | None
    exit_codes: list[int | None]
    # the plan's combined peak at these offsets: the run is expected to survive when it is within
    # the limit
    predicted_bytes: int = 0
    stalled: bool = False

    @property
    def agrees(self) -> bool:
        """The run went as the plan said: survived where predicted within the limit, not where over."""
        return self.survived == (self.predicted_bytes <= self.limit_bytes)

    @property
    def outcome(self) -> str:
        if self.survived:
            return "survived"
        return "OOM-killed" if self.oom_kills else "stalled" if self.stalled else "failed"


@dataclass(frozen=True)
class MaxCopies:
    """The largest number of copies of one program that fits by ``rule``; ``proof`` the run at
    ``copies`` and ``refutation`` the one at ``copies + 1`` (None: not verified)."""

    rule: str
    copies: int
    figure_bytes: int
    next_figure_bytes: int
    proof: PlanRun | None = None
    refutation: PlanRun | None = None

    @property
    def proven(self) -> bool:
        return (
            self.proof is not None
            and self.proof.survived
            and self.refutation is not None
            and (not self.refutation.survived or self.refutation.limit_hits > 0)
        )


@dataclass
class PlanRecord:
    """``machine_bytes``/``machine_cores``: the machine; ``rule``: what must stay within its memory
    ("worst", "p99" or "p99.9"); ``worst_bytes``: every member at its need at once, plus the kernel's
    share per group; ``given_bytes``: the combined peak at ``offsets_seconds`` (exact, on the
    samples); ``aligned_bytes``: at offsets that align every member's peak; ``fits``: the rule's
    figure within the machine."""

    machine_bytes: int
    machine_cores: int
    rule: str
    members: list[PlanMember]
    worst_bytes: int
    offsets_seconds: list[float]
    given_bytes: int
    aligned_bytes: int
    distribution: PlanDistribution | None
    fits: bool
    max_copies: MaxCopies | None = None
    runs: list[PlanRun] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def figure_bytes(self) -> int:
        """The figure the rule judges."""
        if self.rule == "worst" or self.distribution is None:
            return self.worst_bytes
        return self.distribution.p99_bytes if self.rule == "p99" else self.distribution.p999_bytes

    def to_dict(self) -> dict[str, Any]:
        return PLAN.wrap(asdict(self))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PlanRecord:
        plan = PLAN.open(data)[1]
        dist = plan.get("distribution")
        copies = plan.get("max_copies")
        return cls(
            **{
                **plan,
                "members": [PlanMember(**m) for m in plan.get("members", [])],
                "distribution": None if dist is None else PlanDistribution(**dist),
                "max_copies": None if copies is None else _max_copies(copies),
                "runs": [PlanRun(**r) for r in plan.get("runs", [])],
            }
        )


def _max_copies(data: dict[str, Any]) -> MaxCopies:
    proof, refutation = data.get("proof"), data.get("refutation")
    return MaxCopies(
        **{
            **data,
            "proof": None if proof is None else PlanRun(**proof),
            "refutation": None if refutation is None else PlanRun(**refutation),
        }
    )


def load_plan(path: str | os.PathLike[str]) -> PlanRecord:
    """A saved plan record; 66 when the file is missing, 65 when it is not one."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise TargetNotFoundError(f"no plan record {os.fspath(path)}") from None
    except (OSError, ValueError) as e:
        raise ProfileFormatError(f"{os.fspath(path)} is not a plan record: {e}") from None
    try:
        return PlanRecord.from_dict(data)
    except (KeyError, TypeError) as e:
        raise ProfileFormatError(f"{os.fspath(path)} is not a plan record: {e}") from None
