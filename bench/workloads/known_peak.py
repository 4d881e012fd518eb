"""A program whose peak is known by construction: an 800 MiB spike that is freed, then a 200 MiB
array that stays. np.ones writes every page, so allocation peak and resident peak should agree
(~800 MiB plus the interpreter and numpy, ~830 MiB). The spike is read many times so the program
runs ~3 s, as long as the other workloads, so a tool's fixed start-up cost weighs the same in each."""

import os

import numpy as np

MIB = 1 << 20
PASSES = int(os.environ.get("PASSES", "70"))


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
