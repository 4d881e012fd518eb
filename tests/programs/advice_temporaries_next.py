"""Ground truth for the temporaries advice, in its common shape: 20 MiB kept, then one line that
builds a 300 MiB numpy temporary (every page written) and reduces it to a float; the next line
sleeps. The release is seen on the next line, so the temporary's line keeps its growth: the
process's fall after its peak is what shows the temporary."""

import time

import numpy as np

MIB = 1 << 20
N = 300 * MIB // 8


def load() -> np.ndarray:
    return np.ones(20 * MIB // 8)  # LINE: kept


if __name__ == "__main__":
    kept = load()
    time.sleep(0.05)
    total = float((np.ones(N) * 2.0).sum())  # LINE: temporaries
    time.sleep(0.3)
    print(int(total) // (2 * N), kept.nbytes // MIB)
