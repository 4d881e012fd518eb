"""``Profile.gpu``: per device, the allocator records of the run's processes beside NVML's samples.

Inside: each process's torch tracker wrote its CUDA allocator figures and its tensors per device
(``capture.read_gpu_records``). Outside: the runner's NVML sampler saw the device and every process
on it (``watcher.NvmlSamples``). A device is the same in both when its UUID is (torch and NVML
number devices differently under ``CUDA_VISIBLE_DEVICES``); a process, when its pid is, or, where
NVML's pids are another namespace's (a container), when exactly one unknown NVML process holds what
the process reserved plus a plausible context.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgauge._units import format_bytes
from memgauge.capture import is_library, is_own
from memgauge.model import CaptureWarning, LineStats
from memgauge.sections.gpu._nvml_sampler import NvmlDeviceSamples, NvmlSamples
from memgauge.sections.gpu._read import read_gpu_records, read_gpu_snapshot
from memgauge.sections.gpu._record import GpuDevice, GpuProcess, GpuUtilization, GpuWindow

if TYPE_CHECKING:
    from memgauge.runner import SectionInputs
    from memgauge.sections.gpu._analysis_lines import LineSpan

# a CUDA context was 518 MiB bare to 2036 MiB (eager loading, after a training step) on an H100
# (docs/gpu-facts.md): an unknown process that holds more than this above what a process reserved
# is not that process
MAX_CONTEXT = 4 << 30
SOURCE_ALLOCATOR = "torch.cuda.memory_stats (in the process, peaks reset per step)"
SOURCE_TENSORS = "torch tracker (storages on the device)"
SOURCE_PROCESS = "NVML per-process used memory (nvmlDeviceGetComputeRunningProcesses), sampled"
SOURCE_DEVICE = "NVML device used memory (v2), sampled"
SOURCE_CONTEXT = "process_peak - reserved_peak"


def _sum(values: list[int]) -> int | None:
    return sum(values) if values else None


def _allocator(device: GpuDevice, rows: list[tuple[int, dict[str, Any]]], tensors: list[int]) -> None:
    """The inside figures of the processes (pid, allocator row) that used ``device``."""
    for key in ("allocated_peak", "reserved_peak", "active_peak", "reserved_unallocated_at_peak"):
        setattr(device, key, _sum([int(row[key]) for _, row in rows]))
    device.alloc_retries = _sum([int(row["alloc_retries"]) for _, row in rows])
    device.ooms = _sum([int(row["ooms"]) for _, row in rows])
    if rows:
        device.source.update({k: SOURCE_ALLOCATOR for k in ("allocated_peak", "reserved_peak")})
    if len(rows) > 1:
        device.notes.append(
            f"{len(rows)} processes used this device: the allocator figures add each one's peak "
            "(an upper bound: they need not peak together)"
        )
    device.tensors_peak = _sum(tensors)
    if tensors:
        device.source["tensors_peak"] = SOURCE_TENSORS


def _cap(device: GpuDevice, caps: list[int]) -> None:
    """--enforce capped torch's reserve: did the program survive it (no OOM on the device)?"""
    if not caps:
        return
    device.cap_bytes = min(caps)
    device.cap_outcome = "out of memory" if device.ooms else "survived"
    device.notes.append(
        f"--enforce capped torch's reserve at {format_bytes(device.cap_bytes)} "
        f"(set_per_process_memory_fraction; the CUDA context comes on top): {device.cap_outcome}"
        + (f" ({device.ooms} out-of-memory errors)" if device.ooms else "")
    )


def _match(
    device: GpuDevice, seen: NvmlDeviceSamples, tree: set[int], reserved: dict[int, int]
) -> list[GpuProcess]:
    """The run's processes on the device (by pid, else by memory) and the others on it."""
    ours = [GpuProcess(pid, used, "pid", pid) for pid, used in seen.processes.items() if pid in tree]
    strangers = {pid: used for pid, used in seen.processes.items() if pid not in tree}
    found = {p.pid for p in ours}
    for pid, held in sorted(reserved.items()):
        if pid in found:
            continue
        fits = [n for n, used in strangers.items() if 0 <= used - held <= MAX_CONTEXT]
        if len(fits) == 1:
            ours.append(GpuProcess(pid, strangers.pop(fits[0]), "memory", fits[0]))
        else:
            why = "no" if not fits else f"{len(fits)}"
            device.notes.append(
                f"process {pid}: NVML lists it under no pid of the run (another PID namespace?), and "
                f"{why} unknown process holds its reserved bytes plus a context: no process figure for it"
            )
    others = [GpuProcess(pid, used, "", pid) for pid, used in sorted(strangers.items())]
    return sorted(ours, key=lambda p: p.pid) + others


def _nvml(
    device: GpuDevice,
    seen: NvmlDeviceSamples,
    tree: set[int],
    reserved: dict[int, int],
    interval: float,
    offset: float = 0.0,
) -> None:
    device.name = seen.device.name
    device.total_bytes = seen.device.total_bytes
    device.device_used_peak = seen.used_peak
    device.source["device_used_peak"] = SOURCE_DEVICE
    device.utilization_peak = seen.utilization_peak
    mean = seen.utilization_mean
    device.utilization_mean = None if mean is None else round(mean, 1)
    if seen.series:
        device.utilization = GpuUtilization(
            interval_seconds=interval,
            t_seconds=[round(t + offset, 4) for t, _, _ in seen.series],
            gpu=[g for _, g, _ in seen.series],
            memory=[m for _, _, m in seen.series],
        )
    device.processes = _match(device, seen, tree, reserved)
    ours = [p.used_peak for p in device.processes if p.matched_by]
    if ours:
        device.process_peak = sum(ours)
        device.source["process_peak"] = SOURCE_PROCESS
        if len(ours) > 1:
            device.notes.append("the process figure adds each process's peak (an upper bound)")
    if device.process_peak is not None and device.reserved_peak is not None:
        context = device.process_peak - device.reserved_peak
        if context >= 0:
            device.context = context
            device.source["context"] = SOURCE_CONTEXT
        else:
            device.notes.append(
                "NVML's samples missed the process's peak (less than torch reserved): no context figure"
            )


def _user(filename: str) -> bool:
    return not is_library(filename) and not is_own(filename)


def _snapshots(
    records: dict[int, dict[str, Any]],
    keys: dict[int, dict[int, str]],
    inside: dict[str, GpuDevice],
    devices: list[GpuDevice],
) -> None:
    """--gpu-snapshot: each process's memory history read back, its peak replayed and charged to
    lines, on the device it describes."""
    for pid, record in sorted(records.items()):
        path = str(record.get("snapshot") or "")
        if not path:
            continue
        found = read_gpu_snapshot(path)
        if isinstance(found, str):
            for key in keys[pid].values():
                inside[key].notes.append(f"GPU snapshot {path}: {found}")
            continue
        from memgauge.sections.gpu._analysis_snapshot import (
            gpu_snapshot_peak,  # here: only --gpu-snapshot needs it
        )

        for peak in gpu_snapshot_peak(found, _user, pid):
            key = keys[pid].get(peak.device, f"#{peak.device}")
            device = inside.get(key)
            if device is None:
                device = inside[key] = GpuDevice(index=peak.device)
                devices.append(device)
            device.snapshot = device.snapshot or path
            device.peak_lines = sorted(device.peak_lines + list(peak.lines), key=lambda a: -a.bytes)
            before = (
                f", {format_bytes(peak.before_history)} of it allocated before the history"
                if peak.before_history
                else ""
            )
            device.notes.append(
                f"GPU snapshot {path} (pid {pid}; opens in https://pytorch.org/memory_viz): "
                f"{format_bytes(peak.peak_bytes)} allocated at the peak its {peak.events} events "
                f"replay to{before}"
            )


def assemble_gpu(
    records: dict[int, dict[str, Any]],
    samples: NvmlSamples | None,
    tree: set[int],
    nvml_note: str = "",
    t0: float | None = None,
) -> tuple[list[GpuDevice], str]:
    """The profile's ``gpu`` list and one line for the report when it is empty (or NVML was
    missing), from the processes' records (pid -> ``gpu`` object) and NVML's samples. With ``t0``
    (the run's start, on NVML sampling's clock) the utilisation's times are seconds since ``t0``;
    without it, since sampling began."""
    offset = 0.0 if samples is None or t0 is None else samples.t_start - t0
    inside, rows, tensors, windows, keys = _read_inside(records)
    devices: list[GpuDevice] = []
    for key, device in inside.items():
        _allocator(device, rows.get(key, []), tensors.get(key, []))
        device.windows = windows.get(key, [])
        _cap(
            device,
            [int(records[pid]["cap_bytes"]) for pid, _ in rows.get(key, []) if "cap_bytes" in records[pid]],
        )
        devices.append(device)
    _snapshots(records, keys, inside, devices)
    if samples is not None:
        _add_nvml(samples, inside, rows, tree, devices, offset)
    loading = {str(r.get("module_loading", "")) for r in records.values()} - {""}
    for device in devices:
        if nvml_note:
            device.notes.append(nvml_note)
        if loading:
            device.notes.append(f"CUDA_MODULE_LOADING={', '.join(sorted(loading))}")
        elif records:
            device.notes.append("CUDA_MODULE_LOADING unset (lazy loading on current drivers)")
    devices.sort(key=lambda d: d.index)
    if devices:
        return devices, nvml_note or (samples.note if samples is not None else "")
    if nvml_note:
        return [], nvml_note
    return [], "no GPU used by the run"


_Rows = dict[str, list[tuple[int, dict[str, Any]]]]
_Keys = dict[int, dict[int, str]]


def _read_inside(
    records: dict[int, dict[str, Any]],
) -> tuple[dict[str, GpuDevice], _Rows, dict[str, list[int]], dict[str, list[GpuWindow]], _Keys]:
    """The devices the processes' records name (by uuid, else "#index"), with each device's
    allocator rows (pid, row), tensor totals and windows, and per pid torch's device index -> key."""
    inside: dict[str, GpuDevice] = {}
    rows: _Rows = {}
    tensors: dict[str, list[int]] = {}
    windows: dict[str, list[GpuWindow]] = {}
    keys: _Keys = {}
    for pid, record in sorted(records.items()):
        by_index = keys[pid] = {}
        for row in record["devices"]:
            key = str(row["uuid"]) or f"#{row['index']}"
            by_index[int(row["index"])] = key
            inside.setdefault(key, GpuDevice(index=int(row["index"]), uuid=str(row["uuid"])))
            rows.setdefault(key, []).append((pid, row))
        for index, n in record["tensors"].items():
            key = by_index.get(int(index), f"#{index}")
            inside.setdefault(key, GpuDevice(index=int(index)))
            tensors.setdefault(key, []).append(int(n))
        for w in record["windows"]:
            key = by_index.get(int(w["device"]), f"#{w['device']}")
            fields = {k: w[k] for k in ("kind", "name", "allocated_peak", "reserved_peak", "active_peak")}
            ends = {"allocated_end": w["allocated_end"], "reserved_end": w["reserved_end"]}
            windows.setdefault(key, []).append(GpuWindow(**fields, **ends, pid=pid))
    return inside, rows, tensors, windows, keys


def _add_nvml(
    samples: NvmlSamples,
    inside: dict[str, GpuDevice],
    rows: _Rows,
    tree: set[int],
    devices: list[GpuDevice],
    offset: float,
) -> None:
    """NVML's samples of each device joined to the device the records name (a device only NVML
    saw is added where a process of the run used it)."""
    for seen in samples.devices:
        # torch gave no uuid (an old torch): the index, which agrees unless CUDA_VISIBLE_DEVICES is set
        key = seen.device.uuid if seen.device.uuid in inside else f"#{seen.device.index}"
        found = inside.get(key)
        if found is None:
            if not any(pid in tree for pid in seen.processes):
                continue  # a device the run never used
            found = GpuDevice(index=seen.device.index)
            devices.append(found)
        found.uuid = found.uuid or seen.device.uuid
        reserved = {pid: int(row["reserved_peak"]) for pid, row in rows.get(key, [])}
        _nvml(found, seen, tree, reserved, samples.series_interval, offset)


def gpu_of(
    events_dir: str,
    seen: tuple[NvmlSamples | None, str],
    tree: set[int],
    warnings: list[CaptureWarning],
    t0: float | None = None,
) -> tuple[list[GpuDevice], str]:
    """``assemble_gpu`` over the records in ``events_dir`` and what the runner's sampler ``seen``
    (its samples, or None and why not); utilisation times from ``t0`` where given."""
    return assemble_gpu(read_gpu_records(events_dir, warnings=warnings), seen[0], tree, seen[1], t0)


def add_gpu_time(lines: list[LineStats], spans: list[LineSpan], devices: list[GpuDevice]) -> None:
    """Each line's GPU seconds and mean busy percent while it ran (``analysis.gpu_time_per_line``),
    from the line sampler's series (``spans``, seconds since the run's start) and the devices'
    utilisation (seconds since the run's start too: ``gpu_of`` with ``t0``)."""
    if not spans or not devices:
        return
    from memgauge.sections.gpu._analysis_lines import (
        gpu_time_per_line,  # here: a run without a GPU never needs it
    )

    joined = gpu_time_per_line(spans, devices)
    for stats in lines:
        found = joined.get((stats.pid, stats.file, stats.line, stats.function))
        if found is not None:
            stats.gpu_seconds, stats.gpu_busy = found.gpu_seconds, found.gpu_busy


def assemble_gpu_part(run: SectionInputs) -> None:
    """The GPU section's part of a finished run (the registry's "assemble"): the devices, from the
    torch trackers' records and NVML's samples, and each line's GPU time."""
    watched = run.watched.get("gpu")
    seen = (None, "") if watched is None else (watched.seen, "" if watched.seen is not None else watched.why)
    if "torch" not in run.written and seen[0] is None:
        return
    tree = {p.pid for p in run.processes}
    devices, run.measurement["gpu"] = gpu_of(run.events_dir, seen, tree, run.warnings, run.t0)
    run.parts["gpu"] = devices
    add_gpu_time(run.line_data.lines, run.line_data.line_times, devices)  # GPU time per line
