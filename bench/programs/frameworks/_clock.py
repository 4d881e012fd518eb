"""What the framework programs share: their steady rate by their own clock, printed last.

With ``BENCH_LOCKSTEP=PATH`` (bench/frameworks_bench.py, bench/_lockstep.py) the program takes turns
with a plain run of itself, ``BENCH_BLOCK`` steps a turn, its main thread on CPU 0: its rate is then
that of its blocks, without the waits between them, and each block's time is printed too."""

import json
import os
import socket
import sys
import time

WARMUP = 10  # steps left out of the rate: first calls, allocator growth, compilation


class Ends:
    """The program's own clock at each step's end, and its turns when in lockstep."""

    def __init__(self) -> None:
        self.ends: list[float] = []
        self.block = int(os.environ.get("BENCH_BLOCK", "10"))
        self.blocks: list[float] = []
        self.resumed = 0.0
        self.turns: socket.socket | None = None
        if os.environ.get("BENCH_LOCKSTEP"):
            os.sched_setaffinity(0, {0})  # this thread only: memgauge's go where the scheduler puts them
            self.turns = socket.socket(socket.AF_UNIX)
            self.turns.connect(os.environ["BENCH_LOCKSTEP"])
            self._turn(b"r")  # the set-up, the first calls and steps in the first turn

    def _turn(self, said: bytes) -> None:
        assert self.turns is not None
        if said != b"r":
            self.blocks.append(time.perf_counter() - self.resumed)
        self.turns.sendall(said)
        if self.turns.recv(1) != (b"x" if said == b"e" else b"g"):
            sys.exit("lockstep: the bench went away")
        self.resumed = time.perf_counter()

    def tick(self) -> None:
        self.ends.append(time.perf_counter())
        if self.turns is not None and len(self.ends) % self.block == 0:
            self._turn(b"d")

    def report(self) -> None:
        steady = self.ends[WARMUP:]
        rate = (len(steady) - 1) / (steady[-1] - steady[0])
        if self.turns is not None:
            self._turn(b"e")  # the loop's end; exit once both ended (memgauge's exit work waits)
            self.blocks.pop()  # the part block after the last full one, and the loop's teardown
        print(json.dumps({"steps": len(self.ends), "steps_per_second": rate, "blocks": self.blocks}))
