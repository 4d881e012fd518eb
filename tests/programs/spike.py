"""Ground truth: an 800 MiB spike (every page written) that is freed, then 100 MiB kept.
The resident peak is ~800 MiB above the interpreter's baseline, reached inside spike()."""

import os

MIB = 1 << 20
SPIKE = int(os.environ.get("SPIKE_MIB", "800")) * MIB


def spike() -> int:
    block = b"\x01" * SPIKE  # LINE: spike (bytes * n writes every byte: all pages resident)
    n = len(block)
    del block
    return n


def steady() -> bytes:
    return b"\x02" * (100 * MIB)


if __name__ == "__main__":
    spike()
    kept = steady()
    print(len(kept) // MIB)
