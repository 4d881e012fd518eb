"""What measuring a run cost, as one line: memgauge's time before the program's first line and
after its last, and its own CPU time (``Profile.overhead``)."""

from __future__ import annotations

from dataclasses import dataclass

from memgauge.model import AFTER_STEPS, BEFORE_STEPS, Profile


@dataclass(frozen=True)
class OverheadSummary:
    """``before``/``after``: (step, seconds) in order, the steps measured; ``cpu``: (part,
    CPU seconds), each part summed over its processes, largest first."""

    before: list[tuple[str, float]]
    after: list[tuple[str, float]]
    cpu: list[tuple[str, float]]

    @property
    def before_seconds(self) -> float:
        return sum(s for _, s in self.before)

    @property
    def after_seconds(self) -> float:
        return sum(s for _, s in self.after)

    @property
    def cpu_seconds(self) -> float:
        return sum(s for _, s in self.cpu)


def overhead_summary(profile: Profile) -> OverheadSummary | None:
    """None when the profile has no such record (made in-process, or by an older memgauge)."""
    overhead = profile.overhead
    if overhead is None:
        return None
    before = [(s, overhead.steps[s]) for s in BEFORE_STEPS if s in overhead.steps]
    after = [(s, overhead.steps[s]) for s in AFTER_STEPS if s in overhead.steps]
    by_part: dict[str, float] = {}
    for part in overhead.cpu:
        by_part[part.what] = by_part.get(part.what, 0.0) + part.cpu_seconds
    cpu = sorted(by_part.items(), key=lambda item: -item[1])
    return OverheadSummary(before, after, cpu)
