"""Threaded numpy data generation: a ~800 MB random block (100 x 1000 x 1000 float64), then a thread
pool cuts 600 cubes of 100 x 100 x 100 out of it (~2.7 s). numpy releases the GIL, so both cores work."""

import os
import random
from multiprocessing.pool import ThreadPool

import numpy as np

N_CUBES = int(os.environ.get("N_CUBES", "600"))
WORKERS = int(os.environ.get("WORKERS", "2"))
DIM = 100

rng = np.random.default_rng(0)
block = rng.random((100, 1000, 1000))


def cube(seed: int) -> float:
    cols = random.Random(seed).sample(range(1000), DIM)
    return float(block[:, :DIM, cols].sum())


if __name__ == "__main__":
    with ThreadPool(WORKERS) as pool:
        total = sum(pool.imap_unordered(cube, range(N_CUBES)))
    print(round(total, 2))
