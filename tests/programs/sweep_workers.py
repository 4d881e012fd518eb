"""Worker scaling with a known knee: WORKERS threads process ITEMS items, each holding one of
CAPACITY slots of a shared resource (a database with CAPACITY connections) for SECONDS. Throughput
grows with the workers up to CAPACITY and not beyond, whatever else the machine is doing, because
the work is waiting, not CPU. Records items = items done."""

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import memgauge

WORKERS = int(os.environ["WORKERS"])
CAPACITY = int(os.environ.get("CAPACITY", "2"))
ITEMS = int(os.environ.get("ITEMS", "16"))
SECONDS = float(os.environ.get("SECONDS", "0.12"))

slots = threading.BoundedSemaphore(CAPACITY)


def item(_: int) -> int:
    with slots:
        time.sleep(SECONDS)
    return 1


if __name__ == "__main__":
    with ThreadPoolExecutor(WORKERS) as pool:
        done = sum(pool.map(item, range(ITEMS)))
    memgauge.record("items", done)
    print(done)
