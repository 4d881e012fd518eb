"""CPU-bound work split over WORKERS processes, for worker-scaling tests: a fixed total of CHUNKS
chunks of pure-Python arithmetic; records items = chunks done."""

import os
from multiprocessing import Pool

import memgauge

WORKERS = int(os.environ["WORKERS"])
CHUNKS = int(os.environ.get("CHUNKS", "8"))
STEPS = int(os.environ.get("STEPS", "1500000"))


def chunk(seed: int) -> int:
    total = seed
    for i in range(STEPS):
        total = (total * 31 + i) % 1000003
    return total


if __name__ == "__main__":
    with Pool(WORKERS) as pool:
        results = pool.map(chunk, range(CHUNKS), chunksize=1)
    memgauge.record("items", len(results))
    print(sum(results))
