"""Bytes copied between devices (host<->device) inside the measured process: the bookkeeping.

Standard library only: ``_capture_copies_torch`` wraps torch's copy methods and hands each copy over as its
source and destination devices (``str(tensor.device)``: ``cpu``, ``cuda:0``, ``meta``), the bytes
that landed on the destination and the program's line that asked for it. ``copy_direction`` decides
what counts: a copy whose source and destination devices differ, ``h2d`` (host to device), ``d2h``
(device to host) or ``d2d`` (between two devices); a copy within one device is not data movement
across a bus and counts nothing.

Kept per step (aligned with the loop's step rows: ``Loop.end_step`` closes each) and by line.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DIRECTIONS = ("h2d", "d2h", "d2d")
H2D, D2H, D2D = range(len(DIRECTIONS))
HOST = "cpu"
TOP_LINES = 20
MAX_LINES = 1000  # distinct (line, direction) pairs kept; the rest are summed under ""


def copy_direction(source: str, destination: str) -> int | None:
    """The index in ``DIRECTIONS`` of a copy from device ``source`` to ``destination`` (torch's
    device strings), or None when both are the same device (nothing crossed). A device without an
    index (``cuda``) is not told apart from one with (``cuda:0``): they name the same device to a
    program that uses one."""
    if _same(source, destination):
        return None
    if _kind(source) == HOST:
        return H2D
    if _kind(destination) == HOST:
        return D2H
    return D2D


def _kind(device: str) -> str:
    return device.partition(":")[0]


def _same(a: str, b: str) -> bool:
    if a == b:
        return True
    kind_a, _, index_a = a.partition(":")
    kind_b, _, index_b = b.partition(":")
    if kind_a != kind_b:
        return False
    # "cuda" and "cuda:0" are one device; "cpu" has no other
    return kind_a == HOST or not index_a or not index_b or index_a == index_b


class Copies:
    """The copies of one process: per step, in total, and by the line that made them."""

    def __init__(self) -> None:
        self.step = [0, 0, 0]  # bytes per direction in the step running
        self.total = [0, 0, 0]
        self.counts = [0, 0, 0]
        self.steps: list[list[int]] = []  # one [h2d, d2h, d2d] per ended step
        self.dropped = 0
        # (line, direction) -> [bytes, copies]
        self.lines: dict[tuple[str, int], list[int]] = {}

    def add(self, source: str, destination: str, nbytes: int, line: str) -> bool:
        """Count one copy; False when it crossed no device boundary (nothing counted)."""
        direction = copy_direction(source, destination)
        if direction is None:
            return False
        self.step[direction] += nbytes
        self.total[direction] += nbytes
        self.counts[direction] += 1
        key = (line, direction)
        found = self.lines.get(key)
        if found is None:
            if len(self.lines) >= MAX_LINES:
                key = ("", direction)
                found = self.lines.setdefault(key, [0, 0])
            else:
                found = self.lines[key] = [0, 0]
        found[0] += nbytes
        found[1] += 1
        return True

    def end_step(self, kept: bool) -> None:
        """A step ended: its bytes go to its row (``kept``: the loop kept the step's row)."""
        if kept:
            self.steps.append(self.step)
        else:
            self.dropped += 1
        self.step = [0, 0, 0]

    def record(self) -> dict[str, Any]:
        """For the loop's record: ``total`` and ``count`` by direction, ``steps`` ([h2d, d2h, d2d]
        per kept step row) and the ``lines`` that copied most ([line, direction, bytes, copies])."""
        ranked = sorted(self.lines.items(), key=lambda kv: -kv[1][0])[:TOP_LINES]
        return {
            "total": dict(zip(DIRECTIONS, self.total, strict=True)),
            "count": dict(zip(DIRECTIONS, self.counts, strict=True)),
            "steps": self.steps,
            "lines": [[line, DIRECTIONS[d], n, c] for (line, d), (n, c) in ranked],
        }
