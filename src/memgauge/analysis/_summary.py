"""The figures of the short run report, computed from a Profile alone."""

from __future__ import annotations

from dataclasses import dataclass

from memgauge._profile import PhaseRecord, ProcessRecord, Profile

_BLOCKS = " ▁▂▃▄▅▆▇█"


@dataclass(frozen=True)
class PhaseRow:
    phase: PhaseRecord
    share: float  # of the run's wall time
    growth_bytes: int  # peak above the resident size at the phase's start


def exit_text(profile: Profile) -> tuple[str, str]:
    """How the program ended, in words, and its tone: "good", "bad", or "" for no verdict."""
    ex = profile.exit
    if ex.oom_killed:
        return "killed by the OOM killer", "bad"
    if ex.signal is not None:
        return f"killed by {ex.signal_name or f'signal {ex.signal}'}", "bad"
    if ex.code is None:
        return "in-process", ""
    return f"exit {ex.code}", "good" if ex.code == 0 else "bad"


def phase_rows(profile: Profile) -> list[PhaseRow]:
    """Phases in start order, each with its share of the wall time and its peak growth."""
    wall = profile.wall_seconds or 1.0
    return [
        PhaseRow(
            phase=p,
            share=max(0.0, p.duration_seconds) / wall,
            growth_bytes=p.peak_resident_bytes - p.start_resident_bytes,
        )
        for p in profile.phases
    ]


def top_processes(profile: Profile, n: int = 5) -> list[ProcessRecord]:
    """The ``n`` processes with the highest resident peaks."""
    return sorted(profile.processes, key=lambda p: (-p.peak_resident_bytes, p.start_seconds))[:n]


def sparkline(values: list[int] | list[float], width: int = 60, top: float | None = None) -> str:
    """One line of block characters; each column shows the maximum of the samples it covers."""
    if not values or width <= 0:
        return ""
    columns: list[float] = []
    n = len(values)
    for c in range(min(width, n)):
        lo = c * n // min(width, n)
        hi = max(lo + 1, (c + 1) * n // min(width, n))
        columns.append(max(values[lo:hi]))
    scale = top if top else max(columns)
    if scale <= 0:
        return _BLOCKS[0] * len(columns)
    steps = len(_BLOCKS) - 1
    return "".join(_BLOCKS[max(0, min(steps, round(v / scale * steps)))] for v in columns)
