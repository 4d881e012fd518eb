"""Will these programs fit one machine together (``memgauge plan``): the worst case, the combined
peak at given offsets, and the largest number of copies that fits. The distribution under random
offsets is in ``_plan_sim``.

Each member is a step function of time: its profile's timeline (the tree's resident bytes) moved up
or down so that its peak is the profile's container need (``peak.needs_bytes``, which adds the file
pages in use and the kernel's reclaim headroom that resident bytes miss, and leaves out the library
pages they count and a limit does not keep), plus the kernel's share per memory group.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from memgauge.model import PlanMember, Profile

__all__ = [
    "CHARGE_BATCH_PAGES",
    "PlanInput",
    "aligned_offsets",
    "combined_peak",
    "kernel_bytes_per_group",
    "plan_input",
    "worst_case",
    "worst_max_copies",
]

# memcg charges its page counter in batches of 64 pages per CPU (the kernel's MEMCG_CHARGE_BATCH):
# a group's counter, which the limit is judged against, can run this far ahead of the pages in use
CHARGE_BATCH_PAGES = 64


@dataclass(frozen=True)
class PlanInput:
    """A member and its memory over time: ``bytes_at[k]`` from ``t_seconds[k]`` to the next sample
    (the last to ``member.duration_seconds``), the kernel's share included."""

    member: PlanMember
    t_seconds: tuple[float, ...]
    bytes_at: tuple[int, ...]

    @property
    def peak_bytes(self) -> int:
        return max(self.bytes_at, default=0)


def kernel_bytes_per_group(cores: int, page_size: int = 4096) -> int:
    """What the kernel keeps per memory group on top of the pages in use, as the limit sees it:
    one charge batch per CPU (``CHARGE_BATCH_PAGES``)."""
    return CHARGE_BATCH_PAGES * page_size * max(1, cores)


def plan_input(
    profile: Profile,
    *,
    name: str,
    source: str,
    command: list[str],
    cores: int,
    period_seconds: float | None = None,
    page_size: int = 4096,
) -> PlanInput:
    """A member from one ``memgauge run`` profile. Its need is ``peak.needs_bytes`` (profiles
    written before it: the resident peak); its timeline the tree's resident bytes, shifted so its
    largest sample equals the need (an empty timeline: the need for the whole run)."""
    peak = profile.peak
    need = peak.headline_bytes
    kernel = kernel_bytes_per_group(cores, page_size)
    duration = max(profile.wall_seconds, 1e-3)
    tl = profile.timeline
    times = [t for t in tl.t_seconds if t < duration]
    values = tl.tree_resident_bytes[: len(times)]
    if not values:
        times, values = [0.0], [need]
    shift = need - max(values)
    # the samples start when the watcher first read the tree: from 0 the process was starting
    times[0] = 0.0
    bytes_at = tuple(max(0, v + shift) + kernel for v in values)
    # when the timeline peaks (the need's own moment can fall on a later sample of the file pages)
    at = times[values.index(max(values))]
    member = PlanMember(
        name=name,
        source=source,
        command=list(command),
        need_bytes=need,
        kernel_bytes=kernel,
        peak_at_seconds=min(max(0.0, at), duration),
        duration_seconds=duration,
        period_seconds=period_seconds,
    )
    return PlanInput(member, tuple(times), bytes_at)


def copies_of(one: PlanInput, n: int) -> list[PlanInput]:
    """``n`` copies of one member, named ``name#1`` .. ``name#n``."""
    if n == 1:
        return [one]
    out: list[PlanInput] = []
    for i in range(1, n + 1):
        m = one.member
        member = PlanMember(
            f"{m.name}#{i}",
            m.source,
            m.command,
            m.need_bytes,
            m.kernel_bytes,
            m.peak_at_seconds,
            m.duration_seconds,
            m.period_seconds,
        )
        out.append(PlanInput(member, one.t_seconds, one.bytes_at))
    return out


def worst_case(inputs: list[PlanInput]) -> int:
    """Every member at its need at once (the sum Kubernetes schedules by), each group's kernel
    share included."""
    return sum(i.member.need_bytes + i.member.kernel_bytes for i in inputs)


def worst_max_copies(one: PlanInput, machine_bytes: int) -> int:
    """The most copies whose worst case stays within the machine."""
    each = one.member.need_bytes + one.member.kernel_bytes
    return machine_bytes // each if each > 0 else 0


def aligned_offsets(inputs: list[PlanInput]) -> list[float]:
    """Start offsets that put every member's peak at the same moment: the worst timing there is."""
    latest = max((i.member.peak_at_seconds for i in inputs), default=0.0)
    return [latest - i.member.peak_at_seconds for i in inputs]


def combined_peak(inputs: list[PlanInput], offsets: list[float]) -> int:
    """The largest sum of the members' memory when each starts at its offset, exact on their
    samples. A repeating member runs again every period over the span the others need (at least
    two of its periods)."""
    if len(offsets) != len(inputs):
        raise ValueError("one offset per member")
    horizon = 0.0
    for i, o in zip(inputs, offsets, strict=True):
        period = i.member.period_seconds
        horizon = max(horizon, o + (2 * period if period else i.member.duration_seconds))
    events: list[tuple[float, int]] = []
    for member_input, offset in zip(inputs, offsets, strict=True):
        m = member_input.member
        values = member_input.bytes_at
        deltas = [*(b - a for a, b in zip((0, *values), values, strict=False)), -values[-1]]
        times = [*member_input.t_seconds, m.duration_seconds]
        starts = [offset]
        if m.period_seconds:
            runs = math.ceil((horizon - offset) / m.period_seconds) + 1
            starts = [offset + k * m.period_seconds for k in range(runs)]
        for start in starts:
            events.extend(zip([start + t for t in times], deltas, strict=True))
    # at one instant, what ends leaves before what starts is counted: a program that ends exactly
    # as another starts does not overlap it
    events.sort()
    return max(0, max(itertools.accumulate(d for _, d in events), default=0))
