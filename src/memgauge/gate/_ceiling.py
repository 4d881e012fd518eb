"""The memory ceiling a run ran under: a limit the kernel enforced on the run's cgroup
(``memgauge check --enforce``, ``memgauge run --memory-limit``, a sandbox's limit).

Under such a ceiling the measured peak cannot go past the limit: the kernel reclaims, then
OOM-kills, before usage crosses it. So a run that *reached* it (usage hit the limit, or the OOM
killer killed any process of the tree) needed at least the limit, and its figure is "at least the
limit", never "within" it; a run where any process was OOM-killed did not fit, whatever its main
process's exit status says (a child killed at the limit while its parent exits 0).

What the runner recorded (``environment.measurement``): ``cgroup_limit`` ``{bytes, reached}`` and
``oom_kills``; older profiles have neither, and only the main process's ``exit.oom_killed`` with an
enforced limit in ``measurement.enforced`` tells.
"""

from __future__ import annotations

from dataclasses import dataclass

from memgauge.model import Profile

__all__ = ["Ceiling", "ceiling"]


@dataclass(frozen=True)
class Ceiling:
    """``limit_bytes`` the kernel enforced; ``oom_kills`` processes of the tree it killed there;
    ``reached``: usage hit the limit (so the program needed at least ``limit_bytes``)."""

    limit_bytes: int
    oom_kills: int
    reached: bool

    def text(self) -> str:
        from memgauge._units import format_bytes

        limit = format_bytes(self.limit_bytes)
        if self.oom_kills:
            who = "a process" if self.oom_kills == 1 else f"{self.oom_kills} processes"
            return f"the OOM killer killed {who} of the tree at the enforced limit {limit}"
        return f"usage reached the enforced limit {limit}"


def ceiling(profile: Profile) -> Ceiling | None:
    """The ceiling ``profile`` reached, None when it ran under none or stayed below it."""
    measurement = profile.environment.get("measurement")
    if not isinstance(measurement, dict):
        return None
    recorded = measurement.get("cgroup_limit")
    if isinstance(recorded, dict) and isinstance(recorded.get("bytes"), int):
        kills = measurement.get("oom_kills")
        kills = kills if isinstance(kills, int) else int(profile.exit.oom_killed)
        if not recorded.get("reached") and not kills:
            return None
        return Ceiling(recorded["bytes"], kills, True)
    # a profile written before the counters were recorded: the main process's OOM kill under a
    # limit the cgroup enforced is all there is to go by
    enforced = measurement.get("enforced")
    if not profile.exit.oom_killed or not isinstance(enforced, dict):
        return None
    limit = enforced.get("memory_bytes")
    if not isinstance(limit, int) or "cgroup" not in str(enforced.get("memory_by") or ""):
        return None
    return Ceiling(limit, 1, True)
