"""Ground truth for no advice: about a second of a pure-Python CPU loop over small numbers. Nothing
big is held, nothing heavy is imported and nothing waits. The program writes the loop's own CPU
time (its thread's) and wall time to $TRUTH_OUT: on a machine busy with other work the loop may
not get its core, and then it spends time off the CPU as surely as a program that waits."""

import json
import os
import time


def spin(seconds: float) -> int:
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        for i in range(1000):  # LINE: loop
            x = (x + i * i) % 1_000_003
    return x


if __name__ == "__main__":
    wall, cpu = time.monotonic(), time.thread_time()
    result = spin(1.0)
    wall, cpu = time.monotonic() - wall, time.thread_time() - cpu
    with open(os.environ["TRUTH_OUT"], "w", encoding="utf-8") as f:
        json.dump({"wall": wall, "cpu": cpu}, f)
    print(result >= 0)
