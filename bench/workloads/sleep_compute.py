"""Half waiting, half computing (~3 s): 1.5 s of sleep (I/O, a remote call), then ~1.5 s of pure-Python
arithmetic and a 100 MiB numpy array. Tools that sample on a timer cost little while it sleeps."""

import time

import numpy as np

MIB = 1 << 20


def wait() -> None:
    time.sleep(1.5)


def compute(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


if __name__ == "__main__":
    wait()
    a = np.ones(100 * MIB // 8)  # 100 MiB, touched
    print(compute(25_000_000), a.nbytes // MIB)
