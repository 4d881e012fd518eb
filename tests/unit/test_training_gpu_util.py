"""The steady state's GPU from NVML's series: only the samples inside the steady steps' span count,
the devices the run used are preferred, and the bound is sharpened (host) only for a loop that is
not waiting for its data."""

from __future__ import annotations

import pytest

from memgauge.sections.gpu import GpuDevice, GpuProcess, GpuUtilization
from memgauge.sections.training import Training, TrainingStep, summarize_training, with_gpu


def loop(wait: float) -> Training:
    # 10 steps of 0.5 s ending at 0.5 .. 5 s; the first is warm-up: steady span 0.5 .. 5 s
    rows = [TrainingStep(i, (i + 1) * 0.5, 0.5, wait_seconds=wait, kind="optimizer") for i in range(10)]
    return summarize_training(rows, pid=7, fetches=10)


def device(gpu: list[int | None], memory: list[int | None], *, ours: bool = True) -> GpuDevice:
    t = [0.25 * i for i in range(len(gpu))]
    processes = [GpuProcess(pid=7, used_peak=1, matched_by="pid" if ours else "")]
    return GpuDevice(index=0, utilization=GpuUtilization(0.25, t, gpu, memory), processes=processes)


def test_only_the_steady_samples_count_and_a_busy_loop_stays_compute_bound() -> None:
    # 95% while warming up (t < 0.5 s), then 80%; memory 40% with a gap NVML did not report
    gpu = [95, 95] + [80] * 19 + [5] * 4  # after 5 s: the program's exit, idle
    memory: list[int | None] = [10, 10] + [40] * 10 + [None] + [40] * 8 + [0] * 4
    t = with_gpu(loop(wait=0.05), [device(gpu, memory)])
    assert t.gpu_utilization == pytest.approx(0.80)
    assert t.gpu_memory_utilization == pytest.approx(0.40)
    assert t.bound == "compute"


def test_an_idle_gpu_is_host_bound_unless_the_loop_waits_for_data() -> None:
    idle = [10] * 25
    host = with_gpu(loop(wait=0.05), [device(idle, idle)])
    assert host.bound == "host" and "host side" in host.verdict
    data = with_gpu(loop(wait=0.4), [device(idle, idle)])
    assert data.bound == "data" and "the GPU runs kernels 10% of the time" in data.verdict


def test_the_devices_the_run_used_are_preferred_and_no_series_changes_nothing() -> None:
    ours, theirs = device([80] * 25, [50] * 25), device([0] * 25, [0] * 25, ours=False)
    assert with_gpu(loop(wait=0.05), [theirs, ours]).gpu_utilization == pytest.approx(0.8)
    plain = loop(wait=0.05)
    assert with_gpu(plain, []) is plain and with_gpu(plain, [GpuDevice(index=0)]) is plain
    assert plain.gpu_utilization is None and plain.bound == "compute"
