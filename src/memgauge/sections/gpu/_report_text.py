"""The words every GPU section shares (terminal, Markdown, HTML): a device's title, its figures
line, and the rows of its layers. The figures come from ``analysis.gpu_reconciliation``."""

from __future__ import annotations

from memgauge._units import format_bytes
from memgauge.analysis import short_path
from memgauge.sections.gpu._analysis import GpuReconciliation
from memgauge.sections.gpu._record import GpuDevice


def device_title(rec: GpuReconciliation) -> str:
    name = f" ({rec.name})" if rec.name else ""
    total = f", {format_bytes(rec.total_bytes)} in all" if rec.total_bytes is not None else ""
    return f"GPU {rec.index}{name}{total}"


def device_figures(device: GpuDevice) -> str:
    """Utilisation, allocator retries and OOMs, the fragments at the peak: "" when none is known."""
    parts = []
    if device.utilization_peak is not None:
        mean = "" if device.utilization_mean is None else f", mean {device.utilization_mean:g}%"
        parts.append(f"utilisation peak {device.utilization_peak}%{mean}")
    if device.alloc_retries is not None:
        parts.append(f"allocator retries {device.alloc_retries}, out-of-memory errors {device.ooms or 0}")
    if device.reserved_unallocated_at_peak is not None:
        cached = format_bytes(device.reserved_unallocated_at_peak)
        parts.append(f"reserved but unallocated at the allocated peak {cached}")
    return "; ".join(parts)


def layer_rows(rec: GpuReconciliation) -> list[tuple[str, str, str, str]]:
    """(layer, its peak, the gap from the layer below, what that gap is): "—" where not measured."""
    rows = [(rec.layers[0].name, _bytes(rec.layers[0].bytes), "", "")]
    for layer, gap in zip(rec.layers[1:], rec.gaps, strict=True):
        above = "—" if gap.bytes is None else format_bytes(gap.bytes, signed=True)
        rows.append((layer.name, _bytes(layer.bytes), above, gap.meaning))
    return rows


def _bytes(n: int | None) -> str:
    return "—" if n is None else format_bytes(n)


def process_rows(device: GpuDevice) -> list[tuple[str, str, str]]:
    """(pid, its peak on the device, how it was tied to the run): only where more than one row."""
    if len(device.processes) < 2:
        return []
    how = {"pid": "the run's (by pid)", "memory": "the run's (by memory)", "": "another process"}
    return [
        (
            str(p.pid) if p.nvml_pid in (None, p.pid) else f"{p.pid} (NVML {p.nvml_pid})",
            format_bytes(p.used_peak),
            how.get(p.matched_by, p.matched_by),
        )
        for p in device.processes
    ]


def peak_line_rows(device: GpuDevice) -> list[tuple[str, str, str]]:
    """(line, function, bytes allocated at the GPU peak) from ``--gpu-snapshot``: empty without one."""
    return [
        (f"{short_path(a.file)}:{a.line}" if a.line else a.file, a.function, format_bytes(a.bytes))
        for a in device.peak_lines
    ]
