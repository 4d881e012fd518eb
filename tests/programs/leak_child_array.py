"""Ground truth: not a leak. A spawned child builds one 600 MiB array (every page written), holds it
a moment and ends: a one-off cost in a short-lived process, whose growth spans most of its life."""

import multiprocessing as mp
import time

import numpy as np

MIB = 1 << 20


def work() -> None:
    array = np.ones(600 * MIB // 8)  # LINE: array
    time.sleep(0.2)
    print(int(array.sum()) > 0)


if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    child = ctx.Process(target=work)
    child.start()
    child.join()
    print(child.exitcode)
