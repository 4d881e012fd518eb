"""The sections' parts of a run's profile (torch, GPU, training), each assembled only where the run
left something for it: a torch or training record in the events directory, or NVML's samples. A
run without torch, a GPU or a loop (most runs) loads none of their readers, analyses and records,
whose dataclasses alone cost ~15 ms after the program's end, where every millisecond is the run's."""

from __future__ import annotations

from memgauge.capture import records_written

TYPE_CHECKING = False  # not typing's: a run imports no typing (docs/benchmarks.md)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from memgauge.capture import LineData
    from memgauge.model import CaptureWarning, CpuUsage, ProcessRecord
    from memgauge.runner._options import RunOptions
    from memgauge.watcher import NvmlSamples


def section_parts(
    events_dir: str,
    t0: float,
    options: RunOptions,
    gpu_seen: tuple[NvmlSamples | None, str],
    processes: list[ProcessRecord],
    line_data: LineData,
    warnings: list[CaptureWarning],
    cpu: Callable[[], CpuUsage],
    measurement: dict[str, Any],
) -> dict[str, Any]:
    """The ``Profile`` fields ``torch``, ``gpu`` and ``training`` that the run has, and the GPU's
    line in ``measurement``; ``gpu_seen``: NVML's samples, or None and why not. ``line_data`` gets
    each line's GPU time."""
    written = records_written(events_dir)
    parts: dict[str, Any] = {}
    measurement["gpu"] = gpu_seen[1] or "no GPU used by the run"
    if "torch" in written or gpu_seen[0] is not None:
        from memgauge.capture import read_torch
        from memgauge.runner._assemble_gpu import add_gpu_time, gpu_of

        if options.torch != "off":
            parts["torch"] = read_torch(events_dir, t0, warnings=warnings)
        tree = {p.pid for p in processes}
        parts["gpu"], measurement["gpu"] = gpu_of(events_dir, gpu_seen, tree, warnings, t0)
        add_gpu_time(line_data.lines, line_data.line_times, parts["gpu"])  # GPU time per line
    if "training" in written:
        from memgauge.runner._assemble_training import training_of

        gpu = parts.get("gpu", [])
        parts["training"] = training_of(events_dir, t0, processes, warnings=warnings, cpu=cpu(), gpu=gpu)
    return parts
