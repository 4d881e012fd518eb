"""A model service's batch job, for `memgauge sweep`: load a model (fixed cost), then score N_ROWS
rows (cost grows with N_ROWS). At small sizes loading dominates; at large ones scoring does.

    memgauge sweep examples/scaling.py --param N_ROWS=1e5,2e5,4e5,8e5 --predict N_ROWS=8e6 \\
        --budget rss=1GiB --html sweep.html
"""

import array
import os
import random
import time

import memgauge

N_ROWS = int(os.environ.get("N_ROWS", "50000"))
FEATURES = 16


def load_model() -> list[float]:
    # a model file's worth of weights, read and unpacked: the same at every size
    blob = random.Random(1).randbytes(12 << 20)
    time.sleep(0.15)  # the weights file's read
    return [b / 255 for b in blob[:FEATURES]]


def score(weights: list[float]) -> float:
    rng = random.Random(0)
    rows = [array.array("d", (rng.random() for _ in range(FEATURES))) for _ in range(N_ROWS)]
    return sum(sum(w * x for w, x in zip(weights, row, strict=True)) for row in rows)


if __name__ == "__main__":
    with memgauge.phase("load"):
        model = load_model()
    with memgauge.phase("score"):
        total = score(model)
    memgauge.record("rows", N_ROWS)
    print(f"scored {N_ROWS} rows: {total:.3f}")
