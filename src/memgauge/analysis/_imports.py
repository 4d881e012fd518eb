"""The imports of a run, ranked: which packages cost the most start-up time or memory."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memgauge.model import ImportRecord, Profile

ImportOrder = Literal["time", "memory", "own memory"]


@dataclass(frozen=True)
class ImportTotals:
    """Every import's own time and memory, summed: each counted once, not again in the package
    that imported it."""

    seconds: float
    resident_bytes: int


def import_totals(profile: Profile) -> ImportTotals:
    return ImportTotals(
        sum(r.self_seconds for r in profile.imports), sum(r.self_resident_bytes for r in profile.imports)
    )


def top_imports(
    profile: Profile, n: int | None = None, *, by: ImportOrder = "time", least_seconds: float = 0.0
) -> list[ImportRecord]:
    """The ``n`` (default: all) imports that took the most time (``by="time"``), the most memory
    with what they imported (``"memory"``, then time) or without it (``"own memory"``); those
    that took under ``least_seconds`` are left out. Ties keep the order the imports happened in."""
    if by == "time":
        ranked = sorted(profile.imports, key=lambda r: -r.seconds)
    elif by == "memory":
        ranked = sorted(profile.imports, key=lambda r: (-r.resident_bytes, -r.seconds))
    else:
        ranked = sorted(profile.imports, key=lambda r: -r.self_resident_bytes)
    kept = [r for r in ranked if r.seconds >= least_seconds]
    return kept if n is None else kept[:n]
