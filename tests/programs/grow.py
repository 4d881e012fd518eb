"""Ground truth for --enforce: grows by 100 MiB a step (every page written) up to 3 GiB, a
step every 50 ms, then prints how far it got. Under a 1 GiB limit it must be stopped at the
step that crosses it: before ~1.1 GiB."""

import sys
import time

MIB = 1 << 20
STEP = 100 * MIB
TOP = int(sys.argv[1]) if len(sys.argv) > 1 else 3 * 1024 * MIB


def grow() -> list[bytes]:
    held: list[bytes] = []
    while len(held) * STEP < TOP:
        held.append(b"\x01" * STEP)  # LINE: grow
        time.sleep(0.05)
    return held


if __name__ == "__main__":
    print(len(grow()) * STEP // MIB, flush=True)
