"""Helpers shared by the in-process recorder and the runner to build a Profile's parts."""

from __future__ import annotations

from collections.abc import Hashable

from memgauge.model import PhaseRecord


def order_phases(entries: list[tuple[Hashable, Hashable | None, PhaseRecord]]) -> list[PhaseRecord]:
    """Sort phases by start time and turn each ``(key, parent_key, record)`` parent key into the
    index of the parent in the returned list."""
    entries = sorted(entries, key=lambda e: (e[2].start_seconds, e[2].depth))
    index = {key: i for i, (key, _, _) in enumerate(entries)}
    out: list[PhaseRecord] = []
    for _, parent_key, record in entries:
        record.parent = index.get(parent_key) if parent_key is not None else None
        out.append(record)
    return out
