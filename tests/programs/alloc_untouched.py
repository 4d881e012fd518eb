"""Ground truth for --alloc: 1 GiB allocated and never written, next to 300 MiB written, both alive
at the allocation peak. The resident peak holds only the written 300 MiB of them."""

import time

import numpy as np

MIB = 1 << 20


def main() -> None:
    untouched = np.empty(1024 * MIB, dtype=np.uint8)  # ALLOC: untouched
    written = np.ones(300 * MIB, dtype=np.uint8)  # ALLOC: written
    # several of memray's 10 ms memory snapshots fall inside the peak
    time.sleep(0.2)
    print(untouched.nbytes // MIB, int(written.sum()) // MIB)


if __name__ == "__main__":
    main()
