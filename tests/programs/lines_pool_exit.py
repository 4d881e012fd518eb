"""Ground truth: a spawn Pool worker builds a 600 MiB array (every page written) and returns its
size at once; the pool then terminates it (SIGTERM, no atexit), often before its sampler wrote the
peak. Its 600 MiB must still be in the attribution (issue 16): on its own line when its sampler
wrote it, else on the line that started it (the Pool's). The parent holds 100 MiB to the end."""

import multiprocessing as mp
import time

MIB = 1 << 20


def build(n: int) -> int:
    block = b"x" * (n * MIB)  # LINE: worker
    return len(block)


def main() -> int:
    kept = b"y" * (100 * MIB)  # LINE: parent
    with mp.get_context("spawn").Pool(1) as pool:  # LINE: pool
        size = pool.apply(build, (600,))  # LINE: apply
    time.sleep(0.5)
    return size + len(kept)


if __name__ == "__main__":
    print(main() // MIB)
