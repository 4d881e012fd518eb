"""Resident memory with a known law in N (MiB), for sweep tests.

GROWTH=linear: N MiB; quadratic: N*N KiB; affine: 200 MiB + N MiB; step: N MiB, and 64 MiB more
from N=300 on. Every byte is written (a bytes object filled with 1s), so all of it is resident.
Phases "load" (a fixed 4 MiB, 0.2 s) and "compute" (the growth); records items = N.
"""

import os
import time

import memgauge

MIB = 1 << 20
N = int(os.environ["N"])
GROWTH = os.environ.get("GROWTH", "linear")

with memgauge.phase("load"):
    table = b"\x02" * (4 * MIB)
    time.sleep(0.2)
    del table

with memgauge.phase("compute"):
    if GROWTH == "linear":
        size = N * MIB
    elif GROWTH == "quadratic":
        size = N * N * 1024
    elif GROWTH == "affine":
        size = 200 * MIB + N * MIB
    elif GROWTH == "step":  # linear, with 64 MiB more from N=300 on: invisible below
        size = N * MIB + (64 * MIB if N >= 300 else 0)
    else:
        raise SystemExit(f"unknown GROWTH {GROWTH}")
    data = b"\x01" * size
    time.sleep(0.05)

memgauge.record("items", N)
print(len(data))
