"""Grows by 50 MiB (every page written) every 50 ms up to 400 MiB: past any small memory limit."""

import time

MIB = 1 << 20

blocks = []
for _ in range(8):
    blocks.append(b"\x01" * (50 * MIB))
    time.sleep(0.05)
print("survived", len(blocks) * 50, "MiB")
