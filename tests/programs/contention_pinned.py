"""Ground truth for CPU contention: pinned to the CPU named by $PIN_CPU (where the test runs a CPU
hog pinned too), a busy loop (``LINE: busy``) runs until it has had BUSY_SECONDS of CPU, queued
about as long again behind the hog; then a sleep (``LINE: sleep``) waits 0.5 s without wanting a
CPU. Writes the kernel's run delay of the busy loop, and its CPU and wall time, to $TRUTH_OUT."""

import json
import os
import time

BUSY_SECONDS = float(os.environ.get("BUSY_SECONDS", "0.6"))


def run_delay() -> float:
    with open(f"/proc/self/task/{os.getpid()}/schedstat") as f:
        return int(f.read().split()[1]) / 1e9


def busy() -> tuple[float, float, float]:
    delay0, cpu0, wall0 = run_delay(), time.thread_time(), time.monotonic()
    while time.thread_time() - cpu0 < BUSY_SECONDS:  # LINE: busy
        pass
    return run_delay() - delay0, time.thread_time() - cpu0, time.monotonic() - wall0


if __name__ == "__main__":
    os.sched_setaffinity(0, {int(os.environ["PIN_CPU"])})  # this thread only: the sampler stays free
    queued, cpu, wall = busy()
    time.sleep(0.5)  # LINE: sleep
    with open(os.environ["TRUTH_OUT"], "w") as f:
        json.dump({"queued": queued, "cpu": cpu, "wall": wall}, f)
