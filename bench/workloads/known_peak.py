"""A program whose peak is known by construction: an 800 MiB spike that is freed, then a 200 MiB
array that stays. np.ones writes every page, so allocation peak and resident peak should agree
(~800 MiB plus the interpreter and numpy, ~830 MiB). The spike is read a few times so the program
runs ~1 s, long enough that a tool's fixed start-up cost does not dominate its ratio."""

import os

import numpy as np

MIB = 1 << 20
PASSES = int(os.environ.get("PASSES", "30"))


def spike() -> float:
    a = np.ones(800 * MIB // 8)  # 800 MiB, every page touched
    s = 0.0
    for _ in range(PASSES):
        s += float(a.sum())
    del a
    return s


def steady() -> np.ndarray:
    return np.ones(200 * MIB // 8)  # 200 MiB, kept until exit


if __name__ == "__main__":
    s = spike()
    b = steady()
    print(s, b.nbytes // MIB)
