"""Whether an NVIDIA driver is loaded, known without loading NVML: a leaf, read before anything
of NVML's is imported (``_nvml_start``) and by NVML's opener (``_nvml``)."""

from __future__ import annotations

import os

from memgauge._env import ENV_FAKE_NVML

# what a loaded NVIDIA kernel driver leaves (the first on a host, the second in a container given
# the device nodes)
DRIVER_PATHS = ("/proc/driver/nvidia", "/dev/nvidiactl")
NO_DRIVER = "no GPU figures from outside the program: NVML unavailable (no NVIDIA driver)"


def no_driver(environ: dict[str, str] | os._Environ[str] | None = None) -> bool:
    """No NVIDIA driver is loaded, and no scripted NVML (tests) is asked for: nothing to open."""
    if (environ if environ is not None else os.environ).get(ENV_FAKE_NVML):
        return False
    return not any(os.path.exists(p) for p in DRIVER_PATHS)
