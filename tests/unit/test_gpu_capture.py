"""The GPU sources behind their fakes: torch's allocator in the measured process (``GpuLog`` over a
scripted ``torch.cuda``) and NVML outside it (``NvmlSampler`` over a scripted NVML). The figures are
those measured on an H100 (docs/gpu-facts.md); the real sources are exercised by the ``gpu``-marked
tests in tests/integration/test_gpu_real.py."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from memgauge.capture._wire import VERSION, WIRE_VERSION
from memgauge.model import CaptureWarning
from memgauge.sections.gpu import (
    GpuLog,
    NvmlSampler,
    ScriptedCudaSource,
    ScriptedNvmlSource,
    read_gpu_records,
)
from memgauge.sections.torch._capture_track import Tracker

MIB = 1 << 20


class Storage:
    """Stands in for a torch storage: the tracker needs only a weak reference to it."""


def frame(allocated: int, reserved: int, *, end: int = 0, retries: int = 0, ooms: int = 0) -> dict[str, int]:
    return {
        "allocated_bytes.all.peak": allocated,
        "allocated_bytes.all.current": end,
        "reserved_bytes.all.peak": reserved,
        "reserved_bytes.all.current": reserved,
        "active_bytes.all.peak": allocated,
        "active_bytes.all.current": end,
        "num_alloc_retries": retries,
        "num_ooms": ooms,
    }


def cuda(*devices: list[dict[str, int]], initialized: bool = True) -> ScriptedCudaSource:
    return ScriptedCudaSource(
        {
            "initialized": initialized,
            "devices": [{"uuid": f"uuid-{i}", "frames": frames} for i, frames in enumerate(devices)],
        }
    )


def test_each_step_window_is_exact_and_the_run_keeps_the_largest() -> None:
    # step 0 holds 10 MiB + 1 (12 MiB segment), step 1 allocates 100 MiB and frees it
    source = cuda([frame(10 * MIB + 512, 12 * MIB, end=10 * MIB + 512), frame(110 * MIB + 512, 112 * MIB)])
    log = GpuLog(source)
    log.window_end("step", "0")
    log.window_end("step", "1")
    record = log.record()
    assert record is not None
    assert [(w["name"], w["allocated_peak"], w["reserved_peak"]) for w in record["windows"]] == [
        ("0", 10 * MIB + 512, 12 * MIB),
        ("1", 110 * MIB + 512, 112 * MIB),
    ]
    assert record["windows"][0]["allocated_end"] == 10 * MIB + 512
    (device,) = record["devices"]
    assert device["allocated_peak"] == 110 * MIB + 512
    assert device["reserved_peak"] == 112 * MIB
    assert device["reserved_unallocated_at_peak"] == 2 * MIB - 512
    assert device["uuid"] == "uuid-0"
    # reset after each window, never when the record is only read
    assert source.resets == [2]


def test_oom_counters_are_the_allocators_latest() -> None:
    # gpu-facts: each OOM adds one to num_ooms and one to num_alloc_retries
    log = GpuLog(cuda([frame(MIB, 2 * MIB, retries=1, ooms=1), frame(MIB, 2 * MIB, retries=3, ooms=2)]))
    log.window_end("step", "0")
    log.window_end("step", "1")
    record = log.record()
    assert record is not None
    assert (record["devices"][0]["alloc_retries"], record["devices"][0]["ooms"]) == (3, 2)


def test_nothing_is_read_while_the_program_has_not_initialised_cuda() -> None:
    source = cuda([frame(MIB, 2 * MIB)], initialized=False)
    log = GpuLog(source)
    log.window_end("step", "0")
    assert log.record() is None
    assert source.reads == [0]
    assert source.resets == [0]


def test_the_tracker_counts_tensors_per_device_and_ends_a_window_per_step() -> None:
    tracker = Tracker("summary")
    tracker.gpu = GpuLog(cuda([frame(4096, 2 * MIB)], [frame(8192, 2 * MIB)]))
    a, b, c, d = Storage(), Storage(), Storage(), Storage()
    tracker.track(a, 1000, 0, device="cuda:0")
    tracker.track(b, 3000, 0, device="cuda:1")
    tracker.track(c, 5000, 0, device="cpu")
    del a
    tracker.track(d, 500, 0, device="cuda:0")  # after a was freed: the peak on device 0 stays 1000
    tracker.end_step("explicit")
    tracker.end_step("explicit")
    record = tracker.record()
    assert record["gpu"]["tensors"] == {"0": 1000, "1": 3000}
    assert [(w["name"], w["device"]) for w in record["gpu"]["windows"]] == [
        ("0", 0),
        ("0", 1),
        ("1", 0),
        ("1", 1),
    ]
    assert [row["allocated_peak"] for row in record["gpu"]["devices"]] == [4096, 8192]


def test_a_tracker_without_gpu_use_writes_no_gpu_key() -> None:
    tracker = Tracker("summary")
    tracker.gpu = GpuLog(cuda(initialized=False))
    s = Storage()
    tracker.track(s, 100, 0, device="cpu")
    tracker.end_step("explicit")
    assert "gpu" not in tracker.record()


def _write(directory: Path, pid: int, record: dict[str, Any]) -> None:
    (directory / f"torch.{pid}.json").write_text(json.dumps({VERSION: WIRE_VERSION, **record}))


def test_the_reader_takes_each_process_gpu_object_and_names_a_broken_one(tmp_path: Path) -> None:
    log = GpuLog(cuda([frame(MIB, 2 * MIB)]))
    log.window_end("step", "0")
    good = log.record()
    _write(tmp_path, 11, {"gpu": good})
    _write(tmp_path, 12, {"gpu": {**(good or {}), "devices": [{"index": "zero"}]}})
    _write(tmp_path, 13, {})
    warnings: list[CaptureWarning] = []
    found = read_gpu_records(tmp_path, warnings=warnings)
    assert list(found) == [11]
    assert found[11]["devices"][0]["reserved_peak"] == 2 * MIB
    assert [w.file for w in warnings] == ["torch.12.json"]
    assert "a device" in warnings[0].message


def nvml(frames: list[dict[str, Any]], main_pid: int | None = None) -> ScriptedNvmlSource:
    device = {
        "uuid": "GPU-436fa273",
        "name": "NVIDIA H100 80GB HBM3",
        "total": 85_520_809_984,
        "frames": frames,
    }
    return ScriptedNvmlSource({"devices": [device]}, main_pid)


def test_the_sampler_keeps_peaks_per_device_and_per_process() -> None:
    # a 518 MiB context, then 610 MiB + a 1 GiB tensor; the device carries 8.8 MiB no process owns
    unowned = 9_240_576
    source = nvml(
        [
            {"used": 518 * MIB + unowned, "utilization": 0, "processes": {"$main": 518 * MIB}},
            {
                "used": 1634 * MIB + unowned + 300 * MIB,
                "utilization": 90,
                "processes": {"$main": 1634 * MIB, "77": 300 * MIB},
            },
            {"used": 300 * MIB + unowned, "utilization": 30, "processes": {"77": 300 * MIB}},
        ],
        main_pid=4242,
    )
    sampler = NvmlSampler(source)
    for _ in range(3):
        sampler.poll()
    samples = sampler.stop()
    (row,) = samples.devices
    assert row.device.uuid == "436fa273"  # NVML's GPU- prefix removed: torch's spelling
    assert row.used_peak == 1934 * MIB + unowned
    assert row.processes == {4242: 1634 * MIB, 77: 300 * MIB}
    assert (row.utilization_peak, row.utilization_mean) == (90, 40.0)
    assert samples.polls == 3
    assert source.closed


def test_the_sampler_thread_polls_until_stopped() -> None:
    source = nvml([{"used": MIB, "utilization": None, "processes": {}}])
    sampler = NvmlSampler(source, interval=0.001).start()
    deadline = time.monotonic() + 60
    while source.reads[0] < 3 and time.monotonic() < deadline:
        time.sleep(0.001)  # yields to the thread; what the test waits on is its reads
    samples = sampler.stop()
    assert samples.polls >= 3
    assert samples.devices[0].utilization_mean is None
