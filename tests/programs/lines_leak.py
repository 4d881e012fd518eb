"""Ground truth for leak suspects: a request loop whose handler caches a 2 MiB result per call and
never evicts it. Writes the true retention rate (bytes cached / seconds of the loop) to $TRUTH_OUT."""

import json
import os
import time

MIB = 1 << 20
_cache: dict[int, bytearray] = {}


def compute(request: int) -> bytearray:
    result = bytearray(2 * MIB)
    for i in range(0, len(result), 4096):
        result[i] = request % 251  # every page written: resident
    return result


def handle(request: int) -> int:
    result = compute(request)  # LINE: leak
    _cache[request] = result
    time.sleep(0.01)  # the rest of the request: I/O
    return len(result)


if __name__ == "__main__":
    seconds = float(os.environ.get("LOOP_SECONDS", "3"))
    start = time.monotonic()
    n = 0
    while time.monotonic() - start < seconds:
        handle(n)  # LINE: call
        n += 1
    elapsed = time.monotonic() - start
    with open(os.environ["TRUTH_OUT"], "w") as f:
        json.dump({"calls": n, "rate": n * 2 * MIB / elapsed}, f)
