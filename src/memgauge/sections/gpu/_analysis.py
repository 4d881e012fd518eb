"""GPU memory reconciled: the five layers of each device side by side and the gap between each pair.

tensors (held by storages) <= allocated (torch's caching allocator) <= reserved (its segments)
<= process (NVML: reserved + CUDA context + other libraries) <= device (every process). Each gap
has one name. The figures are peaks taken separately, so a gap is between peaks; a layer above the
next one (NVML sampled between the process's peaks, say) is reported, never hidden.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from memgauge._units import format_bytes
from memgauge.model import Profile
from memgauge.sections.gpu._record import GpuDevice

LAYERS = ("tensors", "allocated", "reserved", "process", "device")
GAPS = (
    "allocator rounding (512 B) and allocations no tracked tensor holds (cuBLAS workspaces)",
    "cached by the allocator: free blocks and split-segment fragments",
    "CUDA context and other libraries (cuBLAS, cuDNN, NCCL kernels and workspaces)",
    "other processes on the device and memory no process owns",
)


@dataclass(frozen=True)
class GpuLayer:
    name: str
    bytes: int | None
    source: str


@dataclass(frozen=True)
class GpuGap:
    lower: str
    upper: str
    bytes: int | None  # None: one of the two layers was not measured
    meaning: str


@dataclass(frozen=True)
class GpuReconciliation:
    index: int
    name: str
    total_bytes: int | None
    layers: tuple[GpuLayer, ...]
    gaps: tuple[GpuGap, ...]
    # where a layer's peak is above the next one's (peaks taken at different moments)
    problems: tuple[str, ...]
    notes: tuple[str, ...]


def _layers(device: GpuDevice) -> tuple[GpuLayer, ...]:
    values = (
        device.tensors_peak,
        device.allocated_peak,
        device.reserved_peak,
        device.process_peak,
        device.device_used_peak,
    )
    keys = ("tensors_peak", "allocated_peak", "reserved_peak", "process_peak", "device_used_peak")
    return tuple(
        GpuLayer(name, value, device.source.get(key, ""))
        for name, value, key in zip(LAYERS, values, keys, strict=True)
    )


def reconcile_device(device: GpuDevice) -> GpuReconciliation:
    layers = _layers(device)
    gaps = []
    problems = []
    for (lower, upper), meaning in zip(itertools.pairwise(layers), GAPS, strict=True):
        gap = None if lower.bytes is None or upper.bytes is None else upper.bytes - lower.bytes
        gaps.append(GpuGap(lower.name, upper.name, gap, meaning))
        if gap is not None and gap < 0:
            problems.append(
                f"{lower.name} ({format_bytes(lower.bytes or 0)}) above {upper.name} "
                f"({format_bytes(upper.bytes or 0)}): the two peaks were read at different moments"
            )
    return GpuReconciliation(
        index=device.index,
        name=device.name,
        total_bytes=device.total_bytes,
        layers=layers,
        gaps=tuple(gaps),
        problems=tuple(problems),
        notes=tuple(device.notes),
    )


def gpu_reconciliation(profile: Profile) -> list[GpuReconciliation]:
    """One reconciliation per device the run used, in index order."""
    return [reconcile_device(d) for d in sorted(profile.gpu, key=lambda d: d.index)]


def _why_no_gpu(profile: Profile) -> str:
    return str((profile.environment.get("measurement") or {}).get("gpu") or "no GPU used by the run")


def no_gpu_line(profile: Profile) -> str:
    """The one line a report shows where the profile has no GPU figures; "" where it has some."""
    return "" if profile.gpu else f"GPU: none measured ({_why_no_gpu(profile)})"


def gpu_budget_figure(profile: Profile) -> tuple[int | None, str]:
    """What a ``gpu=`` budget judges: the largest process figure on one device (NVML: what the
    card must hold for this run), with the allocator's reserved bytes named beside it; where NVML
    was missing, torch's reserved bytes, a lower bound (no CUDA context). None: no GPU figure."""
    if not profile.gpu:
        return None, f"no GPU figure in this profile ({_why_no_gpu(profile)})"
    best = max(profile.gpu, key=lambda d: (d.process_peak or 0, d.reserved_peak or 0))
    where = f"device {best.index}" + (f" ({best.name})" if best.name else "")
    if best.process_peak is not None:
        beside = "" if best.reserved_peak is None else f"; torch reserved {format_bytes(best.reserved_peak)}"
        return best.process_peak, f"process peak on {where} (NVML){beside}"
    if best.reserved_peak is not None:
        return best.reserved_peak, (
            f"torch reserved on {where}: a lower bound (NVML missing, so no CUDA context counted)"
        )
    return None, f"no allocator or NVML figure for {where}"


def gpu_phase_figure(profile: Profile, phase: str) -> tuple[int | None, str]:
    """What a per-phase ``gpu=`` budget (``fit.gpu=``) judges: torch's reserved peak inside the
    phase's windows (``GpuWindow`` of kind "phase", exact per window: docs/gpu.md), the largest over
    the records of that name per process, added over the processes on a device, the largest device.
    A lower bound of what the card must hold: NVML is not read per phase, so the CUDA context (the
    run's, where measured, is named in the note) comes on top. None: no window of that phase."""
    if not profile.gpu:
        return None, f"no GPU figure in this profile ({_why_no_gpu(profile)})"
    best: tuple[int, GpuDevice] | None = None
    for device in profile.gpu:
        per_pid: dict[int, int] = {}
        for w in device.windows:
            if w.kind == "phase" and w.name == phase:
                per_pid[w.pid] = max(per_pid.get(w.pid, 0), w.reserved_peak)
        if per_pid and (best is None or sum(per_pid.values()) > best[0]):
            best = (sum(per_pid.values()), device)
    if best is None:
        return None, f"no GPU window of phase '{phase}' (it did not run, or CUDA was not initialised in it)"
    figure, device = best
    where = f"device {device.index}" + (f" ({device.name})" if device.name else "")
    context = "" if device.context is None else f" (the run's context: {format_bytes(device.context)})"
    return (
        figure,
        f"torch reserved in '{phase}' on {where}: a lower bound, the CUDA context comes on top{context}",
    )
