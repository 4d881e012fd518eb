"""This process's I/O counters, read cheaply at phase starts and ends (``_phases.EventSink``).

Standard library only, one ``open``/``read``/``close`` of ``/proc/self/io`` (a few microseconds).
The read itself is counted by the kernel in ``rchar`` (the bytes it returned), after the counters
it returns were taken: a phase's ``rchar`` from two reads is therefore corrected by the first
read's length, so that a phase that read nothing reads 0.
"""

from __future__ import annotations

import os

# the counters, in the order the phase end event carries them (``_wire``: ``io``)
IO_FIELDS = (b"rchar", b"wchar", b"read_bytes", b"write_bytes")


def parse_io(raw: bytes | None) -> tuple[int, int, int, int] | None:
    """``rchar``, ``wchar``, ``read_bytes``, ``write_bytes`` of a ``/proc/PID/io`` text; None where
    the file could not be read (another user's process) or lacks one."""
    if not raw:
        return None
    found: dict[bytes, int] = {}
    for line in raw.split(b"\n"):
        key, _, value = line.partition(b":")
        if key in IO_FIELDS:
            try:
                found[key] = int(value)
            except ValueError:
                return None
    if len(found) != len(IO_FIELDS):
        return None
    return found[b"rchar"], found[b"wchar"], found[b"read_bytes"], found[b"write_bytes"]


def self_io() -> tuple[list[int], int] | None:
    """(``rchar``, ``wchar``, ``read_bytes``, ``write_bytes``) now, and the bytes this read took;
    None where ``/proc/self/io`` cannot be read."""
    try:
        fd = os.open("/proc/self/io", os.O_RDONLY | os.O_CLOEXEC)
        try:
            raw = os.read(fd, 1024)
        finally:
            os.close(fd)
    except OSError:
        return None
    counters = parse_io(raw)
    if counters is None:
        return None
    return list(counters), len(raw)


def io_between(start: tuple[list[int], int] | None, end: tuple[list[int], int] | None) -> list[int] | None:
    """The counters' growth from ``start`` to ``end`` (both from ``self_io``), ``rchar`` less the
    start read's own bytes; None where either is unknown."""
    if start is None or end is None:
        return None
    delta = [max(0, b - a) for a, b in zip(start[0], end[0], strict=True)]
    delta[0] = max(0, delta[0] - start[1])
    return delta
