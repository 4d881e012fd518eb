"""Stalls under a memory limit below 1 GiB, as a program does whose library pages the kernel keeps
re-reading near its limit: reads its own memory cgroup's limit (v1 ``memory.limit_in_bytes``, v2
``memory.max``) and, under 1 GiB, sleeps for a minute instead of finishing (tests/integration/
test_fit_limit_stall.py); otherwise ends at once."""

import time


def memory_limit() -> int | None:
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            names = [("memory", "memory.limit_in_bytes")] if "memory" in controllers.split(",") else []
            names += [("", "memory.max")] if controllers == "" else []
            for mount, name in names:
                try:
                    with open(f"/sys/fs/cgroup/{mount}{path}/{name}".replace("//", "/")) as g:
                        text = g.read().strip()
                except OSError:
                    continue
                if text.isdigit():
                    return int(text)
    return None


limit = memory_limit()
if limit is not None and limit < 1 << 30:
    time.sleep(60)
print("done", limit)
