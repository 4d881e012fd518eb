"""Ground truth: a leak. A request loop whose handler keeps 1 MiB per request in a module-level list
and never drops it, then waits (``time.sleep``, the rest of the request: I/O). The line that
allocates what is kept is marked ``LINE: leak``; the sleep after it holds nothing."""

import os
import time

MIB = 1 << 20
_kept: list[bytearray] = []


def handle(request: int) -> None:
    _kept.append(bytearray(b"x" * MIB))  # LINE: leak
    time.sleep(0.01)  # LINE: sleep


if __name__ == "__main__":
    seconds = float(os.environ.get("LOOP_SECONDS", "2"))
    start = time.monotonic()
    n = 0
    while time.monotonic() - start < seconds:
        handle(n)  # LINE: call
        n += 1
    print(n)
