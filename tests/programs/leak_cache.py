"""Ground truth: not a leak. A request loop with a bounded cache (64 entries of 1 MiB, least recently
used evicted): it grows for the first 64 requests, then stays flat while requests go on."""

import os
import time
from collections import OrderedDict

MIB = 1 << 20
LIMIT = 64
_cache: OrderedDict[int, bytearray] = OrderedDict()


def handle(request: int) -> None:
    _cache[request] = bytearray(b"c" * MIB)  # LINE: cache
    if len(_cache) > LIMIT:
        _cache.popitem(last=False)
    time.sleep(0.01)


if __name__ == "__main__":
    seconds = float(os.environ.get("LOOP_SECONDS", "2"))
    start = time.monotonic()
    n = 0
    while time.monotonic() - start < seconds:
        handle(n)
        n += 1
    print(n, len(_cache))
