"""A training-like loop whose batch size is a module-level constant, as example scripts have it:
each step holds BATCH_SIZE samples of 512 KiB (touched, so resident) at once. ``memgauge fit``
overrides BATCH_SIZE without editing this file."""

import sys

BATCH_SIZE = 8
SAMPLE_BYTES = 512 * 1024
STEPS = 3

for _step in range(STEPS):
    batch = [bytearray(SAMPLE_BYTES) for _ in range(BATCH_SIZE)]
    for sample in batch:
        for i in range(0, SAMPLE_BYTES, 4096):
            sample[i] = 1
    del batch
print(f"trained {STEPS} steps at batch {BATCH_SIZE}", file=sys.stderr)
