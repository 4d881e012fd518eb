"""I/O by phase: the bytes each phase read and wrote (the kernel's counters of its process at the
phase's start and end), with rates over the phase's time. Pure functions over the profile."""

from __future__ import annotations

from dataclasses import dataclass

from memgauge.model import Profile


@dataclass(frozen=True)
class PhaseIo:
    """One phase's I/O: ``rchar``/``wchar`` (every read and write call: pipes, sockets and the page
    cache included) and ``read_bytes``/``write_bytes`` (what reached storage), each call count
    over the phase's seconds as a rate (None: a phase of no measurable length)."""

    name: str
    pid: int
    seconds: float
    rchar: int
    wchar: int
    read_bytes: int
    write_bytes: int
    read_per_second: float | None
    written_per_second: float | None


def phase_io(profile: Profile) -> tuple[PhaseIo, ...]:
    """The phases whose I/O was read and that read or wrote anything, in the profile's order."""
    out = []
    for p in profile.phases:
        if p.rchar is None or p.wchar is None or not (p.rchar or p.wchar or p.read_bytes or p.write_bytes):
            continue
        seconds = p.duration_seconds
        out.append(
            PhaseIo(
                name=p.name,
                pid=p.pid,
                seconds=seconds,
                rchar=p.rchar,
                wchar=p.wchar,
                read_bytes=p.read_bytes or 0,
                write_bytes=p.write_bytes or 0,
                read_per_second=p.rchar / seconds if seconds > 0 else None,
                written_per_second=p.wchar / seconds if seconds > 0 else None,
            )
        )
    return tuple(out)
