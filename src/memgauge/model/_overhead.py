"""What measuring a run cost: memgauge's own steps before the program's first line and after its
last, timed, and the CPU time memgauge's own threads and processes used (docs/profile-schema.md)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

TYPE_CHECKING = False  # not typing's: a run imports no typing (docs/benchmarks.md)
if TYPE_CHECKING:
    from typing import Any

# the steps, in the order they happen; the first three come before the program's first line
BEFORE_STEPS = ("start-up", "set-up", "bootstrap")
AFTER_STEPS = ("shutdown", "assembly")


@dataclass(frozen=True)
class OwnCpu:
    """CPU seconds (user and system) that one of memgauge's own parts used: ``what`` names it (the
    watching process, a thread of memgauge in the measured process, a helper process), ``pid`` the
    process it ran in."""

    what: str
    pid: int
    cpu_seconds: float


@dataclass
class Overhead:
    """``steps``: seconds each of memgauge's steps took, by name (``BEFORE_STEPS``: memgauge's own
    start-up to ``run_program``, the set-up to the program's spawn, the child's bootstrap to the
    program's first line; ``AFTER_STEPS``: the program's last line to its exit being reaped, and
    the profile's assembly); a step that was not measured is absent. ``cpu``: memgauge's own CPU
    time, part by part."""

    steps: dict[str, float] = field(default_factory=dict)
    cpu: list[OwnCpu] = field(default_factory=list)

    @property
    def before_seconds(self) -> float:
        return sum(self.steps.get(s, 0.0) for s in BEFORE_STEPS)

    @property
    def after_seconds(self) -> float:
        return sum(self.steps.get(s, 0.0) for s in AFTER_STEPS)

    @property
    def cpu_seconds(self) -> float:
        return sum(c.cpu_seconds for c in self.cpu)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Overhead:
        return cls(
            steps={str(k): float(v) for k, v in dict(data.get("steps") or {}).items()},
            cpu=[OwnCpu(str(c["what"]), int(c["pid"]), float(c["cpu_seconds"])) for c in data.get("cpu", [])],
        )
