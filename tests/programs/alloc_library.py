"""Ground truth for --alloc: allocations made inside library code. Folded, they belong to the user
lines that called the library; unfolded, to the library's own lines."""

import json
import time

import numpy as np

MIB = 1 << 20


def main() -> None:
    array = np.ones(200 * MIB, dtype=np.uint8)  # ALLOC: numpy
    text = "[" + ",".join(["1"] * (4 * MIB)) + "]"
    numbers = json.loads(text)  # ALLOC: json
    time.sleep(0.05)
    print(array.nbytes // MIB, len(numbers) // MIB)


if __name__ == "__main__":
    main()
