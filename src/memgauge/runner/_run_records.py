"""What the runner writes into a profile about the limits it ran under, once the run is assembled:
the limits enforced and by what (a cgroup, or the watchdog alone), and the memory group's counters
the gate judges a limited run by."""

from __future__ import annotations

from memgauge.isolation import HardLimits

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.model import Profile
    from memgauge.runner._state import RunState
    from memgauge.watcher import MemoryGroup


def record_enforcement(
    profile: Profile, limits: HardLimits, state: RunState, by_group: bool, group_reason: str = ""
) -> None:
    from memgauge._units import format_bytes, format_seconds

    if limits.memory_bytes is not None and not by_group:
        # the host gave no cgroup limit: say which guard replaced it, and what it can miss
        why = group_reason or "the cgroup refused the limit"
        profile.peak.notes.append(
            f"no cgroup memory limit ({why}): the memory limit {format_bytes(limits.memory_bytes)} "
            f"was kept by the watchdog alone, every {format_seconds(HardLimits.WATCHDOG_INTERVAL)}; "
            "a spike shorter than that can pass it"
        )

    if state.stopped_by is None and by_group and profile.exit.oom_killed and limits.memory_bytes is not None:
        # the kernel stopped it at the cgroup's limit before the watchdog saw it crossed
        state.stopped_by = f"rss reached the limit {format_bytes(limits.memory_bytes)} (cgroup)"
    profile.exit.stopped_by = state.stopped_by
    profile.environment.setdefault("measurement", {})["enforced"] = {
        "memory_bytes": limits.memory_bytes,
        "memory_by": None
        if limits.memory_bytes is None
        else ("cgroup and watchdog" if by_group else "watchdog"),
        "wall_seconds": limits.wall_seconds,
        "cpu_seconds": limits.cpu_seconds,
    }


def record_group_counters(profile: Profile, group: MemoryGroup, limit: int | None) -> None:
    """What the gate needs to judge a run under a memory limit the kernel enforced: how many
    processes of the tree the OOM killer killed (the main one or any descendant: a child killed
    at the limit while its parent exits 0 is still a run that did not fit), how often usage hit
    the limit, and whether it reached it (then the program needed at least the limit, whatever
    the counter's peak says: it cannot go past the limit)."""
    measurement = profile.environment.setdefault("measurement", {})
    oom_kills = group.oom_kills()
    hits = group.limit_hits()
    measurement["oom_kills"] = oom_kills
    measurement["limit_hits"] = hits
    if limit is not None:
        reached = oom_kills > 0 or hits > 0 or group.peak() >= limit - group.error_bound_bytes
        measurement["cgroup_limit"] = {"bytes": limit, "reached": reached}
