"""GPU time per line (as Scalene reports it): NVML's utilisation sampled while each line ran.

Two series on one clock (seconds since the run's start): the line sampler's, per process, when its
main thread was on which line (``LineSpan``: a line ran ``seconds`` somewhere within ``start`` ..
``end``, a bucket of the sampler's series, taken as spread evenly over it), and NVML's, per device
(``GpuDevice.utilization``: a sample at ``t`` gives the percent of time a kernel ran, taken to hold
since the sample before it, the first one for one ``interval_seconds``). The join gives each line
its GPU seconds (the sum, over the time it ran and the devices, of the share of time a kernel ran:
device-seconds, as CPU seconds add over threads) and its mean GPU busy percent over that time and
those devices. A process's lines are joined with the devices NVML saw it on; where NVML matched no
process of the run on any device (it lists none), with every device sampled. Time outside NVML's
series (before its first sample's period, after its last sample), or where the device reports no
utilisation, counts in neither figure.

The error is that of the two samplings: a line's edges are known to a bucket of the line sampler
(50 ms, doubled each time its series is thinned), the utilisation to NVML's own averaging period
(1/6 s to 1 s by product) and the runner's poll (150 ms, doubled each time its series is thinned).
Lines that ran shorter than that get a share of their neighbours' GPU time.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

from memgauge.sections.gpu._record import GpuDevice

# (pid, file, line, function, start, end, seconds): ``seconds`` of the line within start..end
LineSpan = tuple[int, str, int, str, float, float, float]
LineKey = tuple[int, str, int, str]


@dataclass(frozen=True)
class LineGpu:
    """One line's GPU figures: ``gpu_seconds`` (device-seconds a kernel ran while the line ran) and
    ``gpu_busy`` (their mean percent over the line's time NVML covered), and that time."""

    gpu_seconds: float
    gpu_busy: float
    covered_seconds: float


@dataclass(frozen=True)
class _Steps:
    """A device's utilisation as steps: sample i holds over ``starts[i]`` .. ``ends[i]``."""

    starts: list[float]
    ends: list[float]
    busy: list[float | None]  # the share of time a kernel ran (0..1), None: not reported


def _steps(device: GpuDevice) -> _Steps | None:
    u = device.utilization
    if u is None or not u.t_seconds:
        return None
    ends = list(u.t_seconds)
    starts = [ends[0] - u.interval_seconds, *ends[:-1]]
    busy = [None if g is None else g / 100 for g in u.gpu]
    return _Steps(starts, ends, busy)


def _overlap(steps: _Steps, start: float, end: float) -> tuple[float, float]:
    """Over ``start`` .. ``end``: (busy seconds, seconds with a utilisation figure)."""
    busy = covered = 0.0
    i = bisect_left(steps.ends, start)
    while i < len(steps.ends) and steps.starts[i] < end:
        share = steps.busy[i]
        part = min(end, steps.ends[i]) - max(start, steps.starts[i])
        if share is not None and part > 0:
            busy += part * share
            covered += part
        i += 1
    return busy, covered


def _devices_of(devices: Sequence[GpuDevice]) -> dict[int, list[_Steps]] | list[_Steps]:
    """Per pid, the sampled devices NVML saw it on; or every sampled device when NVML matched
    no process of the run anywhere."""
    sampled = [(d, s) for d in devices if (s := _steps(d)) is not None]
    if not any(p.matched_by for d, _ in sampled for p in d.processes):
        return [s for _, s in sampled]
    by_pid: dict[int, list[_Steps]] = {}
    for d, s in sampled:
        for p in d.processes:
            if p.matched_by:
                by_pid.setdefault(p.pid, []).append(s)
    return by_pid


def gpu_time_per_line(spans: Sequence[LineSpan], devices: Sequence[GpuDevice]) -> dict[LineKey, LineGpu]:
    """Per line (pid, file, line, function), its GPU seconds and mean GPU busy percent while it
    ran; lines that ran only where no utilisation was sampled are left out."""
    of = _devices_of(devices)
    busy: dict[LineKey, float] = {}
    covered: dict[LineKey, float] = {}
    for pid, file, line, function, start, end, seconds in spans:
        steps = of if isinstance(of, list) else of.get(pid, [])
        if end <= start or seconds <= 0 or not steps:
            continue
        density = seconds / (end - start)  # the line's share of the bucket
        key = (pid, file, line, function)
        for s in steps:
            b, c = _overlap(s, start, end)
            busy[key] = busy.get(key, 0.0) + b * density
            covered[key] = covered.get(key, 0.0) + c * density
    return {
        key: LineGpu(round(busy[key], 6), round(100 * busy[key] / c, 1), round(c, 6))
        for key, c in covered.items()
        if c > 0
    }
