"""Ground truth for the temporaries advice: 20 MiB kept, then one line that builds a 300 MiB numpy
temporary (every page written), reduces it to a float and frees it, all inside that line.

The line goes on (a short sleep, a C call with no Python frame of its own) after the temporary is
freed, so the sampler sees the release while the line still runs: a line's resident growth is
measured while it runs, and a release the sampler first sees on the next line is that line's.
``np.ones(N) * 2.0`` reuses its operand's buffer (numpy's temporary elision): one 300 MiB block."""

import time

import numpy as np

MIB = 1 << 20
N = 300 * MIB // 8


def load() -> np.ndarray:
    return np.ones(20 * MIB // 8)  # LINE: kept


if __name__ == "__main__":
    kept = load()
    time.sleep(0.05)
    total = (float((np.ones(N) * 2.0).sum()), time.sleep(0.1))[0]  # LINE: temporaries
    time.sleep(0.05)
    print(int(total) // (2 * N), kept.nbytes // MIB)
