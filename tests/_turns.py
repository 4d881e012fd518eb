"""Turns between pytest-xdist's workers: most tests measure real processes (CPU shares, wall times,
rates, latencies) and must run with the machine to themselves; the others (the service's API and
queue, the reports, the browser pages) may run beside each other. Under ``-n N`` every test takes a
turn around its whole protocol (setup, call, teardown: a module's fixtures too): a shared turn for a
test of ``conftest.PARALLEL_MODULES``, an exclusive one for every other test.

Two ``flock`` locks in ``memgauge-test-turns`` of the temporary directory, named by xdist's run id
(those of runs over a day old are removed): ``room``, held shared or
exclusive through a test, and ``gate``, held while a room lock is taken. A worker waiting for the
room alone holds the gate, so the other worker cannot take shared turns past it one after another
(``flock`` alone lets shared holders starve an exclusive waiter)."""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO


class Turns:
    def __init__(self, run_id: str) -> None:
        directory = os.path.join(tempfile.gettempdir(), "memgauge-test-turns")
        os.makedirs(directory, exist_ok=True)
        _prune(directory, time.time() - 86400)
        base = os.path.join(directory, run_id)
        self.gate: IO[bytes] = open(base + ".gate", "ab")  # noqa: SIM115  (held for the session)
        self.room: IO[bytes] = open(base + ".room", "ab")  # noqa: SIM115

    @contextmanager
    def turn(self, alone: bool) -> Iterator[None]:
        fcntl.flock(self.gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(self.room, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            fcntl.flock(self.gate, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(self.room, fcntl.LOCK_UN)

    def close(self) -> None:
        self.gate.close()
        self.room.close()


def _prune(directory: str, before: float) -> None:
    """Remove the lock files of earlier runs (never this run's: the other worker holds them open,
    and one opened anew after a removal would be another lock)."""
    for entry in os.scandir(directory):
        try:
            if entry.stat().st_mtime < before:
                os.unlink(entry.path)
        except OSError:
            pass  # another worker removed it first
