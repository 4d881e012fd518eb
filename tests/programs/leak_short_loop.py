"""Ground truth: a leak in a short run. A request loop of under a second whose handler keeps 1 MiB
per request in a module-level list and never drops it, between the rest of each request: some
Python work, then a wait (``time.sleep``: I/O). As short as ``leak_short.py``'s one-off build,
but its growth recurs across the loop, interleaved with other lines: a leak (issue 16)."""

import os
import time

MIB = 1 << 20
_kept: list[bytearray] = []


def handle(request: int) -> int:
    _kept.append(bytearray(b"s" * MIB))  # LINE: leak
    checksum = sum(i * i for i in range(5000))  # the work of the request
    time.sleep(0.004)  # the rest of the request: I/O
    return checksum + request


if __name__ == "__main__":
    seconds = float(os.environ.get("LOOP_SECONDS", "0.8"))
    start = time.monotonic()
    n = 0
    while time.monotonic() - start < seconds:
        handle(n)  # LINE: call
        n += 1
    print(n)
