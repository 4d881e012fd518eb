"""A parent that starts a child which touches more than the budget, then exits 0 whatever became
of it: under an enforced 200 MiB limit the child is OOM-killed and the parent prints its status.
``CHILD_MIB`` (default 300) sets what the child touches; ``CHILD_MODE=cache`` makes the child read
a file of that size instead (page cache: the kernel reclaims it at the limit, nobody is killed)."""

import os
import subprocess
import sys

MIB = 1 << 20
size = int(os.environ.get("CHILD_MIB", "300"))
if os.environ.get("CHILD_MODE") == "cache":
    path = os.path.abspath("cache.bin")
    with open(path, "wb") as f:
        for _ in range(size):
            f.write(b"\x07" * MIB)
        os.fsync(f.fileno())
    code = f"f = open({path!r}, 'rb')\nwhile f.read(1 << 20): pass"
else:
    code = f"x = bytearray({size} * {MIB})  # LINE: child\nimport time\ntime.sleep(0.2)"
r = subprocess.run([sys.executable, "-c", code])  # LINE: start
print("child exit", r.returncode, flush=True)
