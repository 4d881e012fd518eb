"""Facts about the machine and the program's libraries that a reader needs to trust a number."""

from __future__ import annotations

import os
import platform
import sys
from typing import Any

# libraries whose version changes memory behaviour; reported only when the program imported them
WATCHED_LIBRARIES = ("numpy", "pandas", "sklearn", "scipy", "torch", "tensorflow", "jax", "polars", "pyarrow")


def _cgroup_memory_limit() -> int | None:
    """The memory limit of this process's cgroup (v2 ``memory.max`` or v1 ``limit_in_bytes``)."""
    try:
        with open("/proc/self/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            candidate = f"/sys/fs/cgroup{path}/memory.max"
        elif "memory" in controllers.split(","):
            candidate = f"/sys/fs/cgroup/memory{path}/memory.limit_in_bytes"
        else:
            continue
        try:
            with open(candidate) as f:
                raw = f.read().strip()
        except OSError:
            continue
        # v1 reports "no limit" as a huge page-aligned number
        if raw != "max" and int(raw) < (1 << 62):
            return int(raw)
    return None


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
    return {
        # platform.platform() would start a `uname -p` process, inside the tree being measured
        "os": f"{platform.system()}-{platform.release()}-{platform.machine()}",
        "kernel": platform.release(),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)),
        "total_memory_bytes": _total_memory(),
        "memory_limit_bytes": _cgroup_memory_limit(),
        "hostname": platform.node(),
    }


def program_environment() -> dict[str, Any]:
    """Run inside the measured Python process, at its end: what it actually imported."""
    libraries: dict[str, str] = {}
    for name in WATCHED_LIBRARIES:
        module = sys.modules.get(name)
        if module is not None:
            libraries[name] = str(getattr(module, "__version__", "unknown"))
    v = sys.version_info
    return {
        "python": f"{v.major}.{v.minor}.{v.micro}",
        "python_implementation": sys.implementation.name,
        "python_executable": sys.executable,
        "libraries": libraries,
    }
