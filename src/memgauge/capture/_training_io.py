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
    found = dict.fromkeys(IO_FIELDS, -1)
    for line in raw.split(b"\n"):
        key, _, value = line.partition(b":")
        if key in found:
            try:
                found[key] = int(value)
            except ValueError:
                return None
    counters = [found[k] for k in IO_FIELDS]
    if min(counters) < 0:
        return None
    return counters, len(raw)


def io_between(start: tuple[list[int], int] | None, end: tuple[list[int], int] | None) -> list[int] | None:
    """The counters' growth from ``start`` to ``end`` (both from ``self_io``), ``rchar`` less the
    start read's own bytes; None where either is unknown."""
    if start is None or end is None:
        return None
    delta = [max(0, b - a) for a, b in zip(start[0], end[0], strict=True)]
    delta[0] = max(0, delta[0] - start[1])
    return delta
