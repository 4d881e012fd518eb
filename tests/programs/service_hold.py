"""For the service's tests: holds MIB mebibytes (every page written) for SECONDS, then exits 0.
Usage: service_hold.py MIB [SECONDS]."""

import sys
import time

MIB = 1 << 20

if __name__ == "__main__":
    size = int(sys.argv[1]) * MIB
    hold = float(sys.argv[2]) if len(sys.argv) > 2 else 0.5
    block = bytearray(size)
    for i in range(0, size, 4096):
        block[i] = 1
    print(f"HELD {len(block) // MIB} MiB", flush=True)
    time.sleep(hold)
    print("DONE", flush=True)
