"""The GPU part of a ``Profile``: per device, the four layers of GPU memory side by side.

tensors held (by storage) <= allocated by torch's caching allocator <= reserved by it <= used by
the process on the device (reserved + CUDA context + other libraries) <= used on the device (all
processes). Optional data (``Profile.gpu``, empty when no GPU was seen), added without a schema
bump. Every byte figure is an integer, or None where it could not be measured; ``source`` names
where each figure came from. The fields are documented in ``docs/profile-schema.md`` ("gpu").
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from memgauge.model import Attribution


@dataclass
class GpuWindow:
    """torch's allocator over one window of the run: a step (``kind`` "step", ``name`` its index)
    or a phase (``kind`` "phase"), its peaks exact because the peaks are reset at each window's end."""

    kind: str
    name: str
    allocated_peak: int
    reserved_peak: int
    active_peak: int
    allocated_end: int
    reserved_end: int
    pid: int = 0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GpuWindow:
        return cls(**data)


@dataclass
class GpuUtilization:
    """NVML's utilisation of one device over the run, sampled by the runner: at ``t_seconds``
    (seconds since the run's start; in a ``memgauge.profile()`` block, since NVML sampling began,
    within milliseconds of the block's start; one sample every ``interval_seconds``), ``gpu``
    (percent of time a kernel ran) and ``memory`` (percent of time device memory was read or
    written), each None where the device does not report it."""

    interval_seconds: float
    t_seconds: list[float] = field(default_factory=list)
    gpu: list[int | None] = field(default_factory=list)
    memory: list[int | None] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GpuUtilization:
        return cls(**data)


@dataclass
class GpuProcess:
    """One process's use of a device as NVML saw it. ``matched_by`` says how the NVML row was tied
    to a process of the run: "pid", "memory" (a container's PID namespace: NVML's pid is the host's,
    matched by the reserved bytes the process reported plus a context) or "" (not matched: another
    process on the device)."""

    pid: int
    used_peak: int
    matched_by: str = "pid"
    nvml_pid: int | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GpuProcess:
        return cls(**data)


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
    uuid: str = ""
    active_peak: int | None = None
    # reserved minus allocated when allocated peaked: cache and fragments held at the worst moment
    reserved_unallocated_at_peak: int | None = None
    alloc_retries: int | None = None
    ooms: int | None = None
    utilization_peak: int | None = None
    utilization_mean: float | None = None
    windows: list[GpuWindow] = field(default_factory=list)
    processes: list[GpuProcess] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # --enforce: the bytes torch's reserve was capped at (set_per_process_memory_fraction), and
    # "survived" or "out of memory" under it; None and "" without a cap
    cap_bytes: int | None = None
    cap_outcome: str = ""
    # --gpu-snapshot: the file torch's memory history went to, and the lines live at the peak the
    # history replays to (``analysis.gpu_snapshot_peak``), largest first
    snapshot: str = ""
    peak_lines: list[Attribution] = field(default_factory=list)
    # NVML's utilisation over time (None: NVML did not sample the device)
    utilization: GpuUtilization | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GpuDevice:
        nested = ("source", "windows", "processes", "notes", "peak_lines", "utilization")
        rest = {k: v for k, v in data.items() if k not in nested}
        return cls(
            **rest,
            source={str(k): str(v) for k, v in dict(data.get("source") or {}).items()},
            windows=[GpuWindow.from_dict(w) for w in data.get("windows") or []],
            processes=[GpuProcess.from_dict(p) for p in data.get("processes") or []],
            notes=[str(n) for n in data.get("notes") or []],
            peak_lines=[Attribution(**a) for a in data.get("peak_lines") or []],
            utilization=GpuUtilization.from_dict(data["utilization"]) if data.get("utilization") else None,
        )


def read_part(data: list[dict[str, Any]]) -> list[GpuDevice]:
    """The section's part of a profile (``Profile.gpu``, one entry a device) from its dictionaries:
    the registry's "record"."""
    return [GpuDevice.from_dict(d) for d in data]
