"""Ground truth: a library's pool thread (no frame of the program's on its stack) fills a 400 MiB
array while the program's line waits for it: the line that waits is charged."""

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

MIB = 1 << 20


def main() -> int:
    with ThreadPoolExecutor(1) as pool:
        block = pool.submit(np.ones, 400 * MIB // 8).result()  # LINE: pool
    time.sleep(0.2)
    return int(block.nbytes)


if __name__ == "__main__":
    print(main() // MIB)
