"""Ground truth for a service policy that proves a pass (``prove``): a program whose need depends on
the memory it is given, standing in for one whose need changes between runs (as
prove_child_grows.py's does; a sandboxed run's fresh directories keep no counter between runs).

It reads the memory limit of its cgroup (the smallest on the way up): at 1 GiB or more (the
measured run, which the service holds at its --max-memory cap only) it writes 40 MiB, under 1 GiB
(the proof, under the policy's rss) 300 MiB. Arguments: ``child`` (a child process writes it,
else the program itself), and ``fixed`` (40 MiB whatever the limit: a program that survives).
"""

import os
import subprocess
import sys

MIB = 1 << 20


def limit() -> int:
    """The memory cgroup's limit (v1 or v2), walking up to the root; 2**62 when there is none."""
    best = 1 << 62
    with open("/proc/self/cgroup") as f:
        lines = f.read().splitlines()
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "memory":
            base, name = "/sys/fs/cgroup/memory", "memory.limit_in_bytes"
        elif controllers == "":
            base, name = "/sys/fs/cgroup", "memory.max"
        else:
            continue
        while True:
            try:
                with open(os.path.join(base + path, name)) as f:
                    text = f.read().strip()
                if text != "max":
                    best = min(best, int(text))
            except OSError:
                pass
            if path in ("/", ""):
                break
            path = os.path.dirname(path)
    return best


if __name__ == "__main__":
    mib = 40 if "fixed" in sys.argv[1:] or limit() >= 1024 * MIB else 300
    code = f"held = b'\\x07' * ({mib} * {MIB}); print('held', len(held) >> 20, 'MiB', flush=True)"
    if "child" in sys.argv[1:]:
        sys.exit(subprocess.run([sys.executable, "-c", code]).returncode)
    exec(code)
