"""``Profile.gpu`` assembled from the processes' allocator records and NVML's samples (both from
their fakes), reconciled layer by layer, and judged by ``gpu=`` budgets: exact answers, built from
the H100 figures of docs/gpu-facts.md."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memgauge.model import Profile
from memgauge.sections.gpu import (
    GpuDevice,
    GpuProcess,
    GpuWindow,
    NvmlDevice,
    NvmlDeviceSamples,
    NvmlSamples,
    gpu_budget_figure,
    gpu_reconciliation,
    no_gpu_line,
)
from memgauge.sections.gpu._assemble import assemble_gpu
from tests.factories import make_profile

MIB = 1 << 20
UNOWNED = 9_240_576  # the device's used memory no process owns (gpu-facts, NVML v2)


def record(
    allocated: int, reserved: int, *, index: int = 0, uuid: str = "u0", tensors: int | None = None
) -> dict[str, Any]:
    return {
        "module_loading": "",
        "devices": [
            {
                "index": index,
                "uuid": uuid,
                "allocated_peak": allocated,
                "reserved_peak": reserved,
                "active_peak": allocated,
                "reserved_unallocated_at_peak": reserved - allocated,
                "alloc_retries": 0,
                "ooms": 0,
            }
        ],
        "windows": [
            {
                "kind": "step",
                "name": "0",
                "device": index,
                "allocated_peak": allocated,
                "reserved_peak": reserved,
                "active_peak": allocated,
                "allocated_end": 0,
                "reserved_end": reserved,
            }
        ],
        "tensors": {} if tensors is None else {str(index): tensors},
    }


def seen(
    processes: dict[int, int], *, uuid: str = "u0", index: int = 0, used: int | None = None
) -> NvmlDeviceSamples:
    return NvmlDeviceSamples(
        device=NvmlDevice(index, uuid, "NVIDIA H100 80GB HBM3", 85_520_809_984),
        used_peak=used if used is not None else sum(processes.values()) + UNOWNED,
        utilization_peak=90,
        utilization_sum=120,
        utilization_count=3,
        processes=processes,
    )


# the case: 551 MB of tensors, and a process nvidia-smi shows larger
TENSORS = 551_000_064
ALLOCATED = 551_000_064 + 65 * MIB  # + cuBLAS workspaces (2 x 32 MiB + 1 MiB)
RESERVED = 600 * MIB
CONTEXT = 750 * MIB  # lazy loading, after a training step


def test_one_process_one_device_every_layer_and_gap_exact() -> None:
    devices, note = assemble_gpu(
        {100: record(ALLOCATED, RESERVED, tensors=TENSORS)},
        NvmlSamples(devices=[seen({100: RESERVED + CONTEXT, 999: 2000 * MIB})]),
        {100, 101},
    )
    assert note == ""
    (device,) = devices
    assert device.tensors_peak == TENSORS
    assert device.allocated_peak == ALLOCATED
    assert device.reserved_peak == RESERVED
    assert device.process_peak == RESERVED + CONTEXT
    assert device.context == CONTEXT
    assert device.device_used_peak == RESERVED + CONTEXT + 2000 * MIB + UNOWNED
    assert device.total_bytes == 85_520_809_984
    assert set(device.source) == {
        "tensors_peak",
        "allocated_peak",
        "reserved_peak",
        "process_peak",
        "device_used_peak",
        "context",
    }
    assert device.processes == [
        GpuProcess(100, RESERVED + CONTEXT, "pid", 100),
        GpuProcess(999, 2000 * MIB, "", 999),
    ]
    assert device.windows == [GpuWindow("step", "0", ALLOCATED, RESERVED, ALLOCATED, 0, RESERVED, pid=100)]
    assert (device.utilization_peak, device.utilization_mean) == (90, 40.0)
    assert "CUDA_MODULE_LOADING unset (lazy loading on current drivers)" in device.notes

    (rec,) = gpu_reconciliation(make_profile(gpu=devices))
    assert [g.bytes for g in rec.gaps] == [65 * MIB, RESERVED - ALLOCATED, CONTEXT, 2000 * MIB + UNOWNED]
    assert [(g.lower, g.upper) for g in rec.gaps] == [
        ("tensors", "allocated"),
        ("allocated", "reserved"),
        ("reserved", "process"),
        ("process", "device"),
    ]
    assert "cuBLAS workspaces" in rec.gaps[0].meaning
    assert "context" in rec.gaps[2].meaning
    assert rec.problems == ()


def test_a_container_pid_is_matched_by_the_memory_the_process_reported() -> None:
    # NVML lists host pids: 31337 is ours (reserved + a 610 MiB context), 500 a stranger of 8 GiB
    devices, _ = assemble_gpu(
        {7: record(ALLOCATED, RESERVED)},
        NvmlSamples(devices=[seen({31337: RESERVED + 610 * MIB, 500: 8 << 30})]),
        {7},
    )
    (device,) = devices
    assert device.processes[0] == GpuProcess(7, RESERVED + 610 * MIB, "memory", 31337)
    assert device.context == 610 * MIB
    assert device.processes[1].matched_by == ""


def test_an_ambiguous_container_match_is_refused_and_said() -> None:
    both = {31337: RESERVED + 610 * MIB, 31338: RESERVED + 700 * MIB}
    devices, _ = assemble_gpu({7: record(ALLOCATED, RESERVED)}, NvmlSamples(devices=[seen(both)]), {7})
    (device,) = devices
    assert device.process_peak is None
    assert device.context is None
    assert any("process 7" in n and "2 unknown process" in n for n in device.notes)


def test_several_devices_and_processes_each_separately_and_together() -> None:
    # pid 1 on device 0 (uuid a) and pid 2 on devices 0 and 1; NVML numbers the devices the other way
    records = {1: record(100 * MIB, 120 * MIB, uuid="a"), 2: record(50 * MIB, 60 * MIB, uuid="a")}
    records[2]["devices"].append({**record(30 * MIB, 40 * MIB, index=1, uuid="b")["devices"][0]})
    nv = NvmlSamples(
        devices=[
            seen({2: 40 * MIB + 600 * MIB}, uuid="b", index=0),
            seen({1: 120 * MIB + 520 * MIB, 2: 60 * MIB + 600 * MIB}, uuid="a", index=1),
        ]
    )
    devices, _ = assemble_gpu(records, nv, {1, 2})
    a, b = devices
    assert (a.uuid, a.index, b.uuid, b.index) == ("a", 0, "b", 1)
    assert a.allocated_peak == 150 * MIB
    assert a.reserved_peak == 180 * MIB
    assert a.process_peak == 180 * MIB + 1120 * MIB
    assert a.context == 1120 * MIB
    assert [p.pid for p in a.processes] == [1, 2]
    assert any("2 processes used this device" in n for n in a.notes)
    assert (b.allocated_peak, b.reserved_peak, b.process_peak, b.context) == (
        30 * MIB,
        40 * MIB,
        640 * MIB,
        600 * MIB,
    )


def test_without_nvml_the_allocator_layers_stay_and_the_line_says_why() -> None:
    why = "no GPU figures from outside the program: nvidia-ml-py is not installed (extra 'gpu')"
    devices, note = assemble_gpu({1: record(ALLOCATED, RESERVED, tensors=TENSORS)}, None, {1}, why)
    (device,) = devices
    assert (device.process_peak, device.device_used_peak, device.context) == (None, None, None)
    assert note == why
    assert why in device.notes
    (rec,) = gpu_reconciliation(make_profile(gpu=devices))
    assert [g.bytes for g in rec.gaps] == [65 * MIB, RESERVED - ALLOCATED, None, None]
    figure, says = gpu_budget_figure(make_profile(gpu=devices))
    assert figure == RESERVED
    assert "lower bound" in says


def test_no_gpu_at_all_is_one_line_and_no_device() -> None:
    devices, note = assemble_gpu({}, NvmlSamples(devices=[seen({555: 10 * MIB})]), {1})
    assert devices == []  # a device NVML sees that no process of the run used
    assert note == "no GPU used by the run"
    profile = make_profile(environment={"measurement": {"gpu": note}})
    assert no_gpu_line(profile) == "GPU: none measured (no GPU used by the run)"
    assert gpu_budget_figure(profile) == (None, "no GPU figure in this profile (no GPU used by the run)")


def test_a_peak_nvml_missed_gives_no_context_and_a_problem_line() -> None:
    devices, _ = assemble_gpu(
        {1: record(ALLOCATED, RESERVED)}, NvmlSamples(devices=[seen({1: RESERVED - 2 * MIB})]), {1}
    )
    (device,) = devices
    assert device.context is None
    assert any("missed the process's peak" in n for n in device.notes)
    (rec,) = gpu_reconciliation(make_profile(gpu=devices))
    assert rec.gaps[2].bytes == -2 * MIB
    assert rec.problems and "reserved" in rec.problems[0]


def test_the_budget_figure_is_the_process_peak_with_the_allocator_beside() -> None:
    devices, _ = assemble_gpu(
        {1: record(ALLOCATED, RESERVED)}, NvmlSamples(devices=[seen({1: RESERVED + CONTEXT})]), {1}
    )
    figure, says = gpu_budget_figure(make_profile(gpu=devices))
    assert figure == RESERVED + CONTEXT
    assert says == "process peak on device 0 (NVIDIA H100 80GB HBM3) (NVML); torch reserved 600 MiB"


@pytest.mark.parametrize("full", [False, True])
def test_the_gpu_list_survives_json(full: bool) -> None:
    device = GpuDevice(index=0)
    if full:
        devices, _ = assemble_gpu(
            {1: record(ALLOCATED, RESERVED, tensors=TENSORS)},
            NvmlSamples(devices=[seen({1: RESERVED + CONTEXT, 9: MIB})]),
            {1},
        )
        device = devices[0]
        device.cap_bytes, device.cap_outcome = 2 << 30, "survived"
    profile = make_profile(gpu=[device])
    again = Profile.from_dict(json.loads(profile.to_json()))
    assert again.gpu == [device]
    assert GpuDevice.from_dict(device.to_dict()) == device
