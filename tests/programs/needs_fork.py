"""What a container needs with a fork child (issue 16): the parent writes 120 MiB, forks a child
that reads it all (shared copy-on-write, charged once) and writes 30 MiB of its own; both hold
their pages 0.6 s. The tree needs about the parent's peak + 30 MiB, not twice 120 MiB."""

import os
import time


def written(mib: int) -> bytearray:
    out = bytearray(mib << 20)  # calloc: pages untouched until written
    out[::4096] = b"\x05" * (mib << 8)  # one byte a page: every page resident
    return out


held = written(120)
pid = os.fork()
if pid == 0:
    seen = sum(held[::4096])  # reads every page, writes none
    own = written(30)
    time.sleep(0.6)
    os._exit(0 if seen and own else 1)
time.sleep(0.6)
_, status = os.waitpid(pid, 0)
print(len(held) >> 20, os.waitstatus_to_exitcode(status))
