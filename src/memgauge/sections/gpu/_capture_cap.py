"""``--enforce`` for a ``gpu=`` limit: torch's caching allocator capped in the measured process.

``memgauge check --enforce`` puts the limit in ``ENV_GPU_CAP``; when the program's torch is
hooked, ``install_cap`` sets ``torch.cuda.set_per_process_memory_fraction(limit / total)`` on every
device, at once where CUDA already runs, else queued to run when the program initialises it
(``torch.cuda._lazy_call``: memgauge never initialises CUDA itself). The cap bounds torch's
reserved bytes only: the CUDA context and other libraries come on top (a process held 2454 MiB
under a 2048 MiB cap on an H100, docs/gpu-facts.md). Whether the program survived is read from the
allocator's ``num_ooms`` (``GpuLog``'s record carries the cap).
"""

from __future__ import annotations

import os

from memgauge._env import ENV_GPU_CAP

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def cap_bytes(environ: dict[str, str] | os._Environ[str] | None = None) -> int | None:
    value = (environ if environ is not None else os.environ).get(ENV_GPU_CAP, "")
    return int(value) if value.isdigit() and int(value) > 0 else None


def install_cap(torch: Any, environ: dict[str, str] | os._Environ[str] | None = None) -> int | None:
    """Cap ``torch``'s allocator on every device at the bytes ``ENV_GPU_CAP`` names (None: no cap
    asked for). ``torch`` is the loaded module, or a fake with the same ``cuda`` functions."""
    limit = cap_bytes(environ)
    if limit is None:
        return None
    cuda = torch.cuda

    def apply() -> None:
        for device in range(cuda.device_count()):
            total = int(cuda.get_device_properties(device).total_memory)
            cuda.set_per_process_memory_fraction(min(1.0, limit / total), device)

    if cuda.is_initialized():
        apply()
    else:
        cuda._lazy_call(apply)
    return limit
