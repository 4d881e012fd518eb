"""Ground truth for --alloc: a child forked by multiprocessing allocates and writes 300 MiB; the
parent allocates 50 MiB. multiprocessing's fork children end with os._exit, so the child prints its
own VmHWM: no exit event reports it."""

import multiprocessing
import os
import time

import numpy as np

MIB = 1 << 20


def high_water() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))


def child() -> None:
    block = np.ones(300 * MIB, dtype=np.uint8)  # ALLOC: child
    # memray's memory snapshots (every 10 ms) see the peak after it was written
    time.sleep(0.2)
    assert block[0] == 1
    print("child", os.getpid(), high_water(), flush=True)


def main() -> None:
    parent = np.ones(50 * MIB, dtype=np.uint8)  # ALLOC: parent
    proc = multiprocessing.get_context("fork").Process(target=child)
    proc.start()
    proc.join()
    print("parent", proc.exitcode, parent.nbytes // MIB)


if __name__ == "__main__":
    main()
