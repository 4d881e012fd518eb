"""Bytes pickled between processes in real ``memgauge run``s of a program without torch: a child
started by fork, and one by spawn, each sends a known number of known-size payloads to its parent
through a ``multiprocessing.Queue`` (pickled in the queue's feeder thread, written as the child
leaves through ``os._exit``); the child's row holds that many pickles and their bytes."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import run_memgauge

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "profile.schema.json"

N, SIZE = 200, 10_000

PROGRAM = f"""
import multiprocessing as mp, sys, time

def child(q):
    for i in range({N}):
        q.put(bytes([i % 256]) * {SIZE})
    q.put(None)
    time.sleep(1.0)  # long enough for the watcher to see the child, even on a busy machine

if __name__ == "__main__":
    mp.set_start_method(sys.argv[1])
    q = mp.Queue()
    p = mp.Process(target=child, args=(q,))
    p.start()
    got = 0
    while q.get() is not None:
        got += 1
    p.join()
    assert got == {N} and p.exitcode == 0
    print(p.pid)
"""


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_queue_pickles_of_a_child_counted(tmp_path: Path, method: str) -> None:
    (tmp_path / "senders.py").write_text(PROGRAM)
    r = run_memgauge(["-q", "senders.py", method], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.profile is not None
    child = int(r.stdout.split()[-1])
    rows = {p["pid"]: p for p in r.profile["training"]["processes"]}
    sent = rows[child]
    payload = len(pickle.dumps(b"x" * SIZE, protocol=pickle.DEFAULT_PROTOCOL))
    assert sent["pickles"] == N + 1  # the payloads and the closing None
    assert sent["pickled_bytes"] == pytest.approx(N * SIZE, rel=0.02)
    assert sent["pickled_bytes"] == N * payload + len(pickle.dumps(None))
    assert sent["pickled_bytes_per_second"] > 0
    assert sent["shared_bytes"] == 0
    assert sent["role"] == ""  # a sender, not a loop
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(r.profile)
    # the parent only received: it pickled nothing
    assert all(p["pickles"] is None for pid, p in rows.items() if pid != child)
