"""Turns between two runs of one loop (bench/training_lockstep.py, bench/frameworks_bench.py): a
plain run and a measured one wait for each other at their loop's start, then run a block of steps
each in turn through a Unix socket this side serves (``r``: ready, ``g``: go, ``d``: done with a
block, ``e``: ended, ``x``: both ended, exit), the order turned each round, so that the machine's
speed, which on a 2-vCPU VM moves 10-25% over seconds, is the same for both."""

from __future__ import annotations

import json
import socket
import struct
import subprocess
from typing import Any

TIMEOUT = 300.0


def listen(path: str) -> socket.socket:
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(2)
    server.settimeout(TIMEOUT)
    return server


def serve(server: socket.socket, procs: dict[str, subprocess.Popen[str]], plain: str) -> dict[str, str]:
    """Give ``procs`` (name: process, ``plain`` the one started directly; the other connects from
    a child of its process, memgauge's) their turns until both ended; their stdout."""
    turns = {}
    for _ in procs:
        conn, _ = server.accept()
        conn.settimeout(TIMEOUT)
        pid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
        turns[plain if pid == procs[plain].pid else next(n for n in procs if n != plain)] = conn
    for conn in turns.values():
        expect(conn, b"r")
    order, live, rounds = list(turns), set(turns), 0
    while live:
        for name in order if rounds % 2 == 0 else order[::-1]:
            if name in live:
                turns[name].sendall(b"g")
                if expect(turns[name], b"d", b"e") == b"e":
                    live.discard(name)
        rounds += 1
    for conn in turns.values():
        conn.sendall(b"x")  # both done: either may exit
    return {name: proc.communicate(timeout=TIMEOUT)[0] for name, proc in procs.items()}


def results(
    server: socket.socket, procs: dict[str, subprocess.Popen[str]], plain: str, what: str
) -> dict[str, Any]:
    """``serve`` them, then each one's last stdout line read as JSON; exits naming ``what`` when a
    run failed. The processes are killed and the socket closed whatever happens."""
    try:
        outs = serve(server, procs, plain)
    finally:
        for proc in procs.values():
            proc.kill()
        server.close()
    for name, proc in procs.items():
        if proc.returncode:
            raise SystemExit(f"{what}: the {name} run failed (exit {proc.returncode})")
    return {name: json.loads(out.strip().splitlines()[-1]) for name, out in outs.items()}


def expect(conn: socket.socket, *allowed: bytes) -> bytes:
    got = conn.recv(1)
    if got not in allowed:
        raise SystemExit(f"lockstep: a run said {got!r}, not one of {allowed!r} (did it fail?)")
    return got
