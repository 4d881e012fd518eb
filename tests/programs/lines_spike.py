"""Ground truth for peak attribution: 200 MiB kept, then an 800 MiB spike (numpy, every page
written) that is freed, then a pause. The spike's line holds the peak."""

import time

import numpy as np

MIB = 1 << 20


def load() -> np.ndarray:
    return np.ones(200 * MIB // 8)  # LINE: kept


def spike() -> float:
    block = np.ones(800 * MIB // 8)  # LINE: spike
    total = float(block[::4096].sum())
    del block
    return total


if __name__ == "__main__":
    kept = load()
    spike()
    time.sleep(0.1)
    print(int(kept.nbytes // MIB))
