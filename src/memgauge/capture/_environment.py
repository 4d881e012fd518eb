"""Facts about the machine and the program's libraries that a reader needs to trust a number."""

from __future__ import annotations

import os
import platform
import sys
from typing import Any

from memgauge.capture._cgroup import memory_limit

# libraries whose version changes memory behaviour; reported only when the program imported them
WATCHED_LIBRARIES = ("numpy", "pandas", "sklearn", "scipy", "torch", "tensorflow", "jax", "polars", "pyarrow")


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
        "memory_limit_bytes": memory_limit(),
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
