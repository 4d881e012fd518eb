"""Ground truth for ``memgauge plan --catalogue``: WORKERS processes share ITEMS items of pure CPU
work, each item spinning until its thread has used SPIN ms of CPU time, so the rate grows with the
cores a worker gets and not with workers beyond them, and does not move with the host's speed (a
fixed loop's speed moved 26-34 items/s between runs seconds apart on a 2-vCPU VM). Each worker
holds HOLD MiB. Records items = items done."""

import os
import time
from concurrent.futures import ProcessPoolExecutor

import memgauge

WORKERS = int(os.environ["WORKERS"])
ITEMS = int(os.environ.get("ITEMS", "48"))
SPIN = int(os.environ.get("SPIN", "40"))
HOLD = int(os.environ.get("HOLD", "20"))


def item(_: int) -> int:
    held = b"\x03" * (HOLD << 20)
    # CPU time, not wall time: a worker waiting for a core (or throttled by a quota) spends none
    until = time.thread_time() + SPIN / 1000
    x = 0
    while time.thread_time() < until:
        for i in range(1000):
            x ^= i
    return 1 + (x & 0) + (len(held) & 0)


if __name__ == "__main__":
    with ProcessPoolExecutor(WORKERS) as pool:
        done = sum(pool.map(item, range(ITEMS)))
    memgauge.record("items", done)
    print(done)
