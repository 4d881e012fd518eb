"""Ground truth for the time split: about a second each of a pure-Python loop, a numpy call that
runs in C without the GIL, and a sleep. The program measures its own thread CPU time and wall time
for each block and writes them to $TRUTH_OUT: the truth the sampled split is checked against."""

import json
import os
import time

import numpy as np

SECONDS = float(os.environ.get("BLOCK_SECONDS", "1.0"))


def python_loop() -> int:
    end = time.monotonic() + SECONDS
    x = 0
    while time.monotonic() < end:
        for i in range(1000):  # LINE: python
            x += i * i
    return x


def numpy_call() -> None:
    a = np.random.default_rng(0).random(2_000_000)
    end = time.monotonic() + SECONDS
    while time.monotonic() < end:
        np.sort(a)  # LINE: native


def sleeping() -> None:
    time.sleep(SECONDS)  # LINE: wait


def measured(block) -> dict[str, float]:  # type: ignore[no-untyped-def]
    w, c = time.monotonic(), time.thread_time()
    block()
    return {"wall": time.monotonic() - w, "cpu": time.thread_time() - c}


if __name__ == "__main__":
    truth = {
        name: measured(f) for name, f in (("python", python_loop), ("native", numpy_call), ("wait", sleeping))
    }
    with open(os.environ["TRUTH_OUT"], "w") as f:
        json.dump(truth, f)
