"""The GPU part of a ``Profile``: per device, the four layers of GPU memory side by side.

tensors held (by storage) <= allocated by torch's caching allocator <= reserved by it <= used by
the process on the device (reserved + CUDA context + other libraries) <= used on the device (all
processes). Optional data (``Profile.gpu``, empty when no GPU was seen), added without a schema
bump. Every byte figure is an integer, or None where it could not be measured; ``source`` names
where each figure came from. The fields are documented in ``docs/profile-schema.md`` ("gpu").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class GpuDevice:
    """One device's memory over the run (the peaks) as torch's allocator, NVML and the tensor
    tracker saw it; ``context`` is the process's use on the device minus what the allocator
    reserved (the CUDA context, cuBLAS workspaces, other libraries)."""

    index: int
    name: str = ""
    total_bytes: int | None = None
    tensors_peak: int | None = None
    allocated_peak: int | None = None
    reserved_peak: int | None = None
    process_peak: int | None = None
    device_used_peak: int | None = None
    context: int | None = None
    source: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GpuDevice:
        return cls(**{**data, "source": {str(k): str(v) for k, v in dict(data.get("source") or {}).items()}})
