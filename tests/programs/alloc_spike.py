"""Ground truth for --alloc: 200 MiB kept, then an 800 MiB spike that is freed. The allocation peak
is the 1000 MiB alive together inside spike()."""

import time

import numpy as np

MIB = 1 << 20


def spike() -> int:
    block = np.ones(800 * MIB, dtype=np.uint8)  # ALLOC: spike
    # memray's memory snapshots (every 10 ms) see the peak after it was written
    time.sleep(0.2)
    return int(block[-1])


def main() -> None:
    kept = np.ones(200 * MIB, dtype=np.uint8)  # ALLOC: kept
    spike()
    print(kept.nbytes // MIB)


if __name__ == "__main__":
    main()
