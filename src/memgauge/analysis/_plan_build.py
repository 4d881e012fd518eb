"""A plan record from its members (``memgauge plan``): the worst case, the combined peak at the
given offsets and with every peak aligned, the distribution under random offsets, the verdict by
the chosen rule, and the largest number of copies of one member that fits."""

from __future__ import annotations

from dataclasses import dataclass

from memgauge._errors import UsageError
from memgauge.analysis._plan import (
    PlanInput,
    aligned_offsets,
    combined_peak,
    copies_of,
    worst_case,
    worst_max_copies,
)
from memgauge.analysis._plan_sim import simulate
from memgauge.model import MaxCopies, PlanDistribution, PlanRecord

__all__ = ["RULES", "Admission", "admit", "build_plan", "max_copies"]

RULES = ("worst", "p99", "p99.9")
# --max-copies stops counting here: a member of a few KiB would otherwise take a long time to fill
# a large machine by simulation
_MOST_COPIES = 10_000


def _figure(rule: str, worst: int, dist: PlanDistribution | None) -> int:
    if rule == "worst" or dist is None:
        return worst
    return dist.p99_bytes if rule == "p99" else dist.p999_bytes


def build_plan(
    inputs: list[PlanInput],
    *,
    machine_bytes: int,
    machine_cores: int,
    rule: str = "worst",
    offsets: list[float] | None = None,
    trials: int = 10_000,
    seed: int = 0,
    window_seconds: float | None = None,
    distribution: bool = True,
    bins: int = 512,
) -> PlanRecord:
    """The plan of ``inputs`` on the machine. ``offsets``: the start of each member (None: all
    at 0); ``distribution``: False leaves out the random offsets (no numpy needed) and judges by
    the worst case."""
    if rule not in RULES:
        raise UsageError(f"--rule takes one of {', '.join(RULES)}, not {rule!r}")
    if not inputs:
        raise UsageError("nothing to plan: give profiles or programs")
    given = list(offsets) if offsets is not None else [0.0] * len(inputs)
    if len(given) != len(inputs):
        raise UsageError(f"--offsets gives {len(given)} offsets for {len(inputs)} programs")
    worst = worst_case(inputs)
    dist = None
    if distribution:
        dist = simulate(
            inputs, machine_bytes, trials=trials, seed=seed, window_seconds=window_seconds, bins=bins
        )
    notes: list[str] = []
    if not distribution and rule != "worst":
        raise UsageError(f"--rule {rule} needs the random offsets' distribution")
    figure = _figure(rule, worst, dist)
    return PlanRecord(
        machine_bytes=machine_bytes,
        machine_cores=machine_cores,
        rule=rule,
        members=[i.member for i in inputs],
        worst_bytes=worst,
        offsets_seconds=given,
        given_bytes=combined_peak(inputs, given),
        aligned_bytes=combined_peak(inputs, aligned_offsets(inputs)),
        distribution=dist,
        fits=figure <= machine_bytes,
        notes=notes,
    )


def max_copies(
    one: PlanInput,
    *,
    machine_bytes: int,
    rule: str = "worst",
    trials: int = 10_000,
    seed: int = 0,
    window_seconds: float | None = None,
    bins: int = 512,
) -> MaxCopies:
    """The largest number of copies of ``one`` whose figure by ``rule`` stays within the machine
    (the worst case: exact; a percentile: counted up from the worst case's answer, simulating
    each count), with the figures at that count and one more."""
    n = worst_max_copies(one, machine_bytes)

    def figure(count: int) -> int:
        if count == 0:
            return 0
        copies = copies_of(one, count)
        if rule == "worst":
            return worst_case(copies)
        dist = simulate(
            copies, machine_bytes, trials=trials, seed=seed, window_seconds=window_seconds, bins=bins
        )
        return _figure(rule, 0, dist)

    at, after = figure(n), figure(n + 1)
    if rule != "worst":
        while after <= machine_bytes and n < _MOST_COPIES:
            n, at, after = n + 1, after, figure(n + 2)
    return MaxCopies(rule=rule, copies=n, figure_bytes=at, next_figure_bytes=after)


@dataclass(frozen=True)
class Admission:
    """Whether ``candidate`` may join what a machine already holds: by ``rule``, the figure of the
    admitted alone (``before_bytes``) and with the candidate (``after_bytes``), against the
    machine's memory; ``free_bytes`` what the rule leaves after it (negative: over)."""

    rule: str
    admitted: bool
    before_bytes: int
    after_bytes: int
    machine_bytes: int

    @property
    def free_bytes(self) -> int:
        return self.machine_bytes - self.after_bytes


def admit(
    held: list[PlanInput],
    candidate: PlanInput,
    *,
    machine_bytes: int,
    rule: str = "worst",
    trials: int = 10_000,
    seed: int = 0,
) -> Admission:
    """Judge a new program against those a machine already holds (the validation service's
    admission): the worst case of all of them, or a percentile of their combined peak under
    random offsets, within the machine's memory. Releasing one is judging without it."""
    if rule not in RULES:
        raise UsageError(f"the admission rule is one of {', '.join(RULES)}, not {rule!r}")

    def figure(members: list[PlanInput]) -> int:
        if not members:
            return 0
        if rule == "worst":
            return worst_case(members)
        return _figure(rule, 0, simulate(members, machine_bytes, trials=trials, seed=seed))

    after = figure([*held, candidate])
    return Admission(rule, after <= machine_bytes, figure(held), after, machine_bytes)
