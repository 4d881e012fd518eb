"""Grows by 50 MiB a step until something stops it."""

MIB = 1 << 20
blocks = []
for _ in range(100):
    blocks.append(b"\x0b" * (50 * MIB))
