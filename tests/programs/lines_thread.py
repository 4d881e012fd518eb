"""Ground truth: a worker thread builds a 500 MiB numpy array while the main thread waits in join()."""

import threading

import numpy as np

MIB = 1 << 20
out: list[int] = []


def work() -> None:
    block = np.ones(500 * MIB // 8)  # LINE: thread
    out.append(int(block.nbytes))
    del block


if __name__ == "__main__":
    t = threading.Thread(target=work)
    t.start()
    t.join()
    print(out[0] // MIB)
