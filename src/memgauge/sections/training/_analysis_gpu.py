"""A loop's GPU in its steady state: NVML's utilisation over the steady steps, and what it says of
the bound.

Pure functions over the NVML series the runner put in ``Profile.gpu`` (``GpuDevice.utilization``:
per sample, the percent of time a kernel ran and the percent of time device memory was read or
written) and the loop's steps. The devices are those the run's processes used (NVML matched one
of them), else every device sampled. ``gpu_memory_utilization`` is NVML's memory-controller busy
share: how much of the time the memory was moving data, a proxy for bandwidth use, not a share of
the peak bandwidth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from memgauge.sections.gpu import GpuDevice
from memgauge.sections.training._analysis import training_verdict
from memgauge.sections.training._analysis_cpu import steady_span
from memgauge.sections.training._record import Training

# a loop whose GPU ran kernels less than this share of the steady time, and that waits for data
# less than half of it, is bound by its host side (Python, launches, synchronisations, copies)
GPU_BUSY = 0.5


def _steady_mean(
    t_seconds: Sequence[float], values: Sequence[int | None], start: float, end: float
) -> float | None:
    """The mean of the samples taken in ``start``..``end``, as a share (0..1)."""
    inside = [v for t, v in zip(t_seconds, values, strict=False) if start <= t <= end and v is not None]
    return sum(inside) / len(inside) / 100 if inside else None


def with_gpu(t: Training, devices: Sequence[GpuDevice]) -> Training:
    """``t`` with the steady GPU figures and ``bound`` sharpened by them (``host``: the GPU is busy
    less than ``GPU_BUSY`` of the time and waiting for data is not what takes it)."""
    sampled = [d for d in devices if d.utilization is not None and d.utilization.t_seconds]
    used = [d for d in sampled if any(p.matched_by for p in d.processes)] or sampled
    span = steady_span(t)
    if not used or span is None:
        return t
    gpu = [
        m
        for d in used
        if d.utilization is not None
        and (m := _steady_mean(d.utilization.t_seconds, d.utilization.gpu, *span)) is not None
    ]
    memory = [
        m
        for d in used
        if d.utilization is not None
        and (m := _steady_mean(d.utilization.t_seconds, d.utilization.memory, *span)) is not None
    ]
    if not gpu and not memory:
        return t
    out = replace(t)
    out.gpu_utilization = round(sum(gpu) / len(gpu), 4) if gpu else None
    out.gpu_memory_utilization = round(sum(memory) / len(memory), 4) if memory else None
    if out.bound == "compute" and out.gpu_utilization is not None and out.gpu_utilization < GPU_BUSY:
        out.bound = "host"
    out.verdict = training_verdict(out)
    return out
