"""Ground truth: the parent holds 150 MiB while a spawned child builds 400 MiB; the tree peak counts
both (>= 550 MiB), the child's own peak is >= 400 MiB."""

import multiprocessing as mp
import os
import time

MIB = 1 << 20


def child(ready_path: str) -> None:
    block = b"\x03" * (400 * MIB)  # LINE: child
    open(ready_path, "w").close()
    time.sleep(0.5)  # hold the peak long enough for the parent to still be alive and holding
    del block


if __name__ == "__main__":
    mp.set_start_method("spawn")
    held = b"\x04" * (150 * MIB)
    ready = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"ready-{os.getpid()}")
    p = mp.Process(target=child, args=(ready,))
    p.start()
    p.join()
    assert p.exitcode == 0
    print(len(held) // MIB, os.path.exists(ready))
    os.unlink(ready)
