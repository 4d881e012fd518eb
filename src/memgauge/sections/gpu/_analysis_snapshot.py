"""The GPU peak attributed to lines, from torch's memory history (``--gpu-snapshot``).

A snapshot (``torch.cuda.memory._snapshot()``: ``segments`` with their ``blocks`` as they are at the
dump, and ``device_traces``, per device the ring buffer of the last alloc/free events, each with its
Python stack) is replayed: the blocks live when the history begins are the blocks live at the dump,
less those the history allocated, plus those it freed (of these the allocating stack is unknown:
they are charged to ``<before the history>``). Forward from there, each ``alloc`` adds its block's
bytes and each ``free_requested`` (``free_completed`` where the history kept no requests) takes them
away, as ``allocated_bytes`` counts them; at the largest total the live blocks are summed by the
first frame of the user's code in their stack (innermost first), as the resident peak's lines are.
Pure: the caller says which files are the user's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memgauge.model import Attribution

BEFORE = "<before the history>"
NO_FRAME = "<no user frame>"
TOP = 20  # lines kept per device
STACK = 8  # callers kept per line

Block = tuple[int, list[dict[str, Any]] | None]  # bytes, frames (None: allocated before the history)


@dataclass(frozen=True)
class GpuSnapshotPeak:
    """One device's replayed peak: ``peak_bytes`` live at its largest moment (``at_event`` events
    into the history; -1: at its start), charged to ``lines`` (largest first, at most ``TOP``)."""

    device: int
    peak_bytes: int
    events: int
    at_event: int
    before_history: int  # bytes live at the peak that were allocated before the history began
    lines: tuple[Attribution, ...]


def _live_at_dump(snapshot: dict[str, Any], device: int) -> dict[int, Block]:
    live: dict[int, Block] = {}
    for segment in snapshot.get("segments") or []:
        if int(segment.get("device", 0)) != device:
            continue
        address = int(segment.get("address", 0))
        for block in segment.get("blocks") or []:
            addr = int(block.get("address", address))
            if block.get("state") == "active_allocated":
                live[addr] = (int(block["size"]), list(block.get("frames") or []))
            address = addr + int(block.get("size", 0))
    return live


def _free_action(trace: list[dict[str, Any]]) -> str:
    return "free_requested" if any(e.get("action") == "free_requested" for e in trace) else "free_completed"


def _start(trace: list[dict[str, Any]], at_dump: dict[int, Block], free: str) -> dict[int, Block]:
    live = dict(at_dump)
    for event in reversed(trace):
        action, addr = event.get("action"), int(event.get("addr", 0))
        if action == "alloc":
            live.pop(addr, None)
        elif action == free:
            live[addr] = (int(event.get("size", 0)), None)
    return live


def _replay(
    trace: list[dict[str, Any]], live: dict[int, Block], free: str, stop: int | None
) -> tuple[int, int, dict[int, Block]]:
    """(peak bytes, the index of the event that reached it, live blocks after event ``stop``)."""
    total = sum(size for size, _ in live.values())
    peak, at = total, -1
    for i, event in enumerate(trace):
        if stop is not None and i > stop:
            break
        action, addr = event.get("action"), int(event.get("addr", 0))
        if action == "alloc":
            total -= live[addr][0] if addr in live else 0
            live[addr] = (int(event.get("size", 0)), list(event.get("frames") or []))
            total += live[addr][0]
            if total > peak:
                peak, at = total, i
        elif action in (free, "free_completed") and addr in live:
            total -= live.pop(addr)[0]
    return peak, at, live


def _key(frames: list[dict[str, Any]] | None, user: Callable[[str], bool]) -> tuple[str, int, str, list[str]]:
    if frames is None:
        return BEFORE, 0, "", []
    for i, frame in enumerate(frames):
        filename = str(frame.get("filename", ""))
        if user(filename):
            callers = [
                f"{f.get('filename')}:{f.get('line')}"
                for f in frames[i + 1 :]
                if user(str(f.get("filename", "")))
            ]
            return filename, int(frame.get("line", 0)), str(frame.get("name", "")), callers[:STACK][::-1]
    return NO_FRAME, 0, "", []


def gpu_snapshot_peak(
    snapshot: dict[str, Any], user: Callable[[str], bool], pid: int = 0
) -> list[GpuSnapshotPeak]:
    """Per device with a history, its peak replayed and charged to lines (``user(filename)``: a
    file of the user's code)."""
    found = []
    for device, trace in enumerate(snapshot.get("device_traces") or []):
        if not trace:
            continue
        free = _free_action(trace)
        start = _start(trace, _live_at_dump(snapshot, device), free)
        peak, at, _ = _replay(trace, dict(start), free, None)
        _, _, live = _replay(trace, dict(start), free, at)
        by_line: dict[tuple[str, int, str], list[Any]] = {}
        before = 0
        for size, frames in live.values():
            filename, line, name, stack = _key(frames, user)
            before += size if frames is None else 0
            row = by_line.setdefault((filename, line, name), [0, stack])
            row[0] += size
        lines = sorted(
            (
                Attribution(pid, f, n, name, row[0], row[1], "gpu snapshot")
                for (f, n, name), row in by_line.items()
            ),
            key=lambda a: (-a.bytes, a.file, a.line),
        )
        found.append(GpuSnapshotPeak(device, peak, len(trace), at, before, tuple(lines[:TOP])))
    return found
