"""Facts about the machine and the program's libraries that a reader needs to trust a number."""

from __future__ import annotations

import os

from memgauge.watcher._cgroup import memory_limit

TYPE_CHECKING = False  # not typing's: a run imports no typing (docs/benchmarks.md)
if TYPE_CHECKING:
    from typing import Any


def _total_memory() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def machine_environment() -> dict[str, Any]:
    # os.uname(), as platform's system(), release(), machine() and node() read it on Linux, without
    # importing platform (~5 ms, its regular expressions compiled at import) into every run;
    # platform.platform() would start a `uname -p` process, inside the tree being measured
    uname = os.uname()
    return {
        "os": f"{uname.sysname}-{uname.release}-{uname.machine}",
        "kernel": uname.release,
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)),
        "total_memory_bytes": _total_memory(),
        "memory_limit_bytes": memory_limit(),
        "hostname": uname.nodename,
    }
