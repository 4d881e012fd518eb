"""The turns pytest-xdist's workers take (tests/_turns.py): shared turns overlap, an exclusive one
has the room to itself, and a waiting exclusive turn goes before shared turns asked for later."""

from __future__ import annotations

import threading
import time
import uuid

from tests._turns import Turns


def _take(turns: Turns, alone: bool, log: list[str], name: str, hold: float) -> threading.Thread:
    def run() -> None:
        with turns.turn(alone):
            log.append(f"{name} in")
            time.sleep(hold)
            log.append(f"{name} out")

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _wait_for(log: list[str], entry: str) -> None:
    deadline = time.monotonic() + 5
    while entry not in log and time.monotonic() < deadline:
        time.sleep(0.01)


def test_shared_turns_overlap_and_an_exclusive_turn_waits_for_them_and_goes_first() -> None:
    run = uuid.uuid4().hex
    # one Turns per worker: flock locks belong to an open file, so each worker opens its own
    first, second, third = Turns(run), Turns(run), Turns(run)
    log: list[str] = []
    try:
        a = _take(first, False, log, "a", 1.0)
        _wait_for(log, "a in")
        b = _take(second, False, log, "b", 0.05)
        b.join(0.8)
        assert log == ["a in", "b in", "b out"]  # b ran while a held its shared turn
        x = _take(second, True, log, "x", 0.1)
        time.sleep(0.2)  # x waits at the room, holding the gate
        c = _take(third, False, log, "c", 0.05)  # asked after x: must wait for it
        for t in (a, x, c):
            t.join(5)
        assert log[3:] == ["a out", "x in", "x out", "c in", "c out"], log
    finally:
        for t in (first, second, third):
            t.close()
