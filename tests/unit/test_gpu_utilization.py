"""NVML's utilisation over time (what the training figures read, docs/gpu.md): the runner's sampler
keeps, per device, each poll's (time, gpu %, memory %) on its clock, thins the series by pairs past
``MAX_SERIES``, and the assembly puts them in ``GpuDevice.utilization``; a scripted NVML."""

from __future__ import annotations

import pytest

from memgauge.sections.gpu import GpuDevice, NvmlSampler, ScriptedNvmlSource, _nvml_sampler
from memgauge.sections.gpu._assemble import assemble_gpu

MIB = 1 << 20


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        self.t += 0.25
        return self.t


def source(frames: list[tuple[int | None, int | None]]) -> ScriptedNvmlSource:
    rows = [
        {"used": 500 * MIB, "utilization": g, "memory_utilization": m, "processes": {"7": 400 * MIB}}
        for g, m in frames
    ]
    return ScriptedNvmlSource(
        {"devices": [{"uuid": "GPU-u0", "name": "H100", "total": 80 << 30, "frames": rows}]}
    )


def test_each_poll_keeps_its_time_and_both_utilisations() -> None:
    sampler = NvmlSampler(source([(0, 0), (95, 40), (None, None)]), interval=0.25, clock=Clock())
    for _ in range(3):
        sampler.poll()
    (row,) = sampler.samples.devices
    # the clock moved 0.25 s at the sampler's start and at each poll
    assert row.series == [(0.25, 0, 0), (0.5, 95, 40), (0.75, None, None)]
    (device,), _ = assemble_gpu({}, sampler.stop(), {7})
    assert isinstance(device, GpuDevice) and device.utilization is not None
    assert (device.utilization.t_seconds, device.utilization.gpu, device.utilization.memory) == (
        [0.25, 0.5, 0.75],
        [0, 95, None],
        [0, 40, None],
    )
    assert device.utilization.interval_seconds == 0.25
    assert GpuDevice.from_dict(device.to_dict()) == device  # the profile JSON keeps them
    assert device.utilization_peak == 95


def test_past_the_limit_the_series_are_thinned_by_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_nvml_sampler, "MAX_SERIES", 4)
    sampler = NvmlSampler(source([(i * 10, i) for i in range(10)]), interval=0.25, clock=Clock())
    for _ in range(10):
        sampler.poll()
    (row,) = sampler.samples.devices
    # 4 kept -> thinned to polls 0, 2; then every second poll: 4, 6 -> 4 kept -> polls 0, 4; then 8
    assert [g for _, g, _ in row.series] == [0, 40, 80]
    assert sampler.samples.series_interval == 1.0
    assert row.utilization_peak == 90  # the peak and mean still see every poll
