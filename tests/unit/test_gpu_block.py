"""A ``memgauge.profile()`` block's GPU figures (what the pytest plugin's ``gpu=`` budgets judge):
the allocator's peaks from the block's start, a window of the torch tracker's log (its steps'
resets inside the block fold into it; its phases keep their own windows), beside NVML's process
figure; both sources scripted (the tests' hooks), in this process."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from memgauge import phase
from memgauge.gate import judge, parse_budget
from memgauge.runner import profile
from memgauge.sections.gpu import GpuLog, ScriptedCudaSource
from memgauge.sections.gpu._capture_plug import follow_phases
from memgauge.sections.torch._capture import set_torch_tracker
from memgauge.sections.torch._capture_track import Tracker

pytest.importorskip("torch")
MIB = 1 << 20


def frame(allocated: int, reserved: int) -> dict[str, int]:
    return {"allocated_bytes.all.peak": allocated, "reserved_bytes.all.peak": reserved}


@pytest.fixture
def tracker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Tracker]:
    # frame N until the Nth reset of the peaks (torch's peaks are one state, shared by all readers)
    frames = [frame(900 * MIB, 900 * MIB), frame(300 * MIB, 320 * MIB), frame(500 * MIB, 520 * MIB)]
    frames.append(frame(100 * MIB, 520 * MIB))
    t = Tracker("summary")
    t.gpu = GpuLog(ScriptedCudaSource({"devices": [{"uuid": "u0", "frames": frames}]}))
    follow_phases()  # as the GPU section does where it plugs into the tracker
    device = {"uuid": "GPU-u0", "name": "fake", "total": 80 << 30}
    device["frames"] = [{"used": 1200 * MIB, "utilization": 30, "processes": {str(os.getpid()): 1100 * MIB}}]
    (tmp_path / "nvml.json").write_text(json.dumps({"devices": [device]}))
    monkeypatch.setenv("MEMGAUGE_TEST_FAKE_NVML", str(tmp_path / "nvml.json"))
    set_torch_tracker(t)
    try:
        yield t
    finally:
        set_torch_tracker(None)


def test_a_block_peaks_from_its_start_through_the_trackers_step_windows(tracker: Tracker) -> None:
    with profile(sample=False) as block:
        tracker.end_step("explicit")  # a window of 300 MiB
        tracker.end_step("explicit")  # a window of 500 MiB: the block's peak
    assert block.profile is not None
    (device,) = block.profile.gpu
    # 900 MiB was before the block (the tracker's run keeps it), 100 MiB the block's last stretch
    assert (device.allocated_peak, device.reserved_peak) == (500 * MIB, 520 * MIB)
    assert tracker.gpu.devices[0]["allocated_peak"] == 900 * MIB
    assert (device.process_peak, device.context) == (1100 * MIB, 580 * MIB)
    assert device.processes[0].matched_by == "pid"


def test_a_phase_inside_a_block_gets_its_window_and_its_gpu_budget(tracker: Tracker) -> None:
    with profile(sample=False) as block, phase("fit"):
        tracker.end_step("explicit")  # 500 MiB in fit, reset inside it
    assert block.profile is not None
    (device,) = block.profile.gpu
    fit = [(w.allocated_peak, w.reserved_peak) for w in device.windows if w.kind == "phase"]
    # fit: 300 MiB before its step's end, 500 MiB at it, 100 MiB after: the step's reset hid nothing
    assert fit == [(500 * MIB, 520 * MIB)]
    (result,) = judge(block.profile, parse_budget("fit.gpu=519MiB")).results
    assert (result.measured, result.status) == (520 * MIB, "fail")
