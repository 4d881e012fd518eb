"""The GPU section: the CUDA allocator per device and window (through the torch section's hook
points), NVML's view of the devices from outside the program, the memory history's snapshot,
GPU time per line, the five memory layers reconciled, and ``gpu=`` budgets under ``--enforce``.

Its parts, by layer: ``_capture*`` runs in the measured process (standard library only; torch is
the program's); ``_nvml*`` is the watcher's side; ``_read`` reads what the capture wrote;
``_record`` is its part of the profile (``Profile.gpu``); ``_analysis*`` its pure functions;
``_assemble`` puts a run's part together; ``_report*`` its report blocks; ``_budget`` its verdicts;
``_inprocess`` and ``_notebook`` its parts of ``memgauge.profile`` and the notebook extension.
Lazy: importing this face loads nothing until a name is used."""

from __future__ import annotations

from memgauge import _lazy

# not `from typing import TYPE_CHECKING`: importing typing costs the measured process ~8 ms
TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.sections.gpu._analysis import (
        GpuReconciliation,
        gpu_budget_figure,
        gpu_phase_figure,
        gpu_reconciliation,
        no_gpu_line,
    )
    from memgauge.sections.gpu._analysis_lines import LineSpan, gpu_time_per_line
    from memgauge.sections.gpu._analysis_snapshot import gpu_snapshot_peak
    from memgauge.sections.gpu._assemble import add_gpu_time, gpu_of
    from memgauge.sections.gpu._budget import under_gpu_cap
    from memgauge.sections.gpu._capture_cap import install_cap
    from memgauge.sections.gpu._capture_log import GpuLog, ScriptedCudaSource, TorchCudaSource
    from memgauge.sections.gpu._capture_phase import gpu_phase_ended, gpu_phase_started
    from memgauge.sections.gpu._capture_snapshot import install_snapshot
    from memgauge.sections.gpu._inprocess import BlockGpu
    from memgauge.sections.gpu._notebook import GpuMonitor, GpuPeak, NoGpu, TorchCudaMonitor
    from memgauge.sections.gpu._nvml import NvmlDevice, ScriptedNvmlSource, open_nvml
    from memgauge.sections.gpu._nvml_sampler import NvmlDeviceSamples, NvmlSampler, NvmlSamples
    from memgauge.sections.gpu._nvml_start import start_nvml_sampler
    from memgauge.sections.gpu._read import read_gpu_records, read_gpu_snapshot
    from memgauge.sections.gpu._record import GpuDevice, GpuProcess, GpuUtilization, GpuWindow
    from memgauge.sections.gpu._report import gpu_section

_NAMES = {
    "BlockGpu": "_inprocess",
    "add_gpu_time": "_assemble",
    "gpu_of": "_assemble",
    "gpu_phase_ended": "_capture_phase",
    "gpu_phase_started": "_capture_phase",
    "gpu_section": "_report",
    "under_gpu_cap": "_budget",
    "gpu_budget_figure": "_analysis",
    "gpu_phase_figure": "_analysis",
    "gpu_reconciliation": "_analysis",
    "gpu_snapshot_peak": "_analysis_snapshot",
    "gpu_time_per_line": "_analysis_lines",
    "GpuDevice": "_record",
    "GpuLog": "_capture_log",
    "GpuMonitor": "_notebook",
    "GpuPeak": "_notebook",
    "GpuProcess": "_record",
    "GpuReconciliation": "_analysis",
    "GpuUtilization": "_record",
    "GpuWindow": "_record",
    "install_cap": "_capture_cap",
    "install_snapshot": "_capture_snapshot",
    "LineSpan": "_analysis_lines",
    "no_gpu_line": "_analysis",
    "NoGpu": "_notebook",
    "NvmlDevice": "_nvml",
    "NvmlDeviceSamples": "_nvml_sampler",
    "NvmlSampler": "_nvml_sampler",
    "NvmlSamples": "_nvml_sampler",
    "open_nvml": "_nvml",
    "read_gpu_records": "_read",
    "read_gpu_snapshot": "_read",
    "ScriptedCudaSource": "_capture_log",
    "ScriptedNvmlSource": "_nvml",
    "start_nvml_sampler": "_nvml_start",
    "TorchCudaMonitor": "_notebook",
    "TorchCudaSource": "_capture_log",
}

__all__ = [
    "BlockGpu",
    "GpuDevice",
    "GpuLog",
    "GpuMonitor",
    "GpuPeak",
    "GpuProcess",
    "GpuReconciliation",
    "GpuUtilization",
    "GpuWindow",
    "LineSpan",
    "NoGpu",
    "NvmlDevice",
    "NvmlDeviceSamples",
    "NvmlSampler",
    "NvmlSamples",
    "ScriptedCudaSource",
    "ScriptedNvmlSource",
    "TorchCudaMonitor",
    "TorchCudaSource",
    "add_gpu_time",
    "gpu_budget_figure",
    "gpu_of",
    "gpu_phase_ended",
    "gpu_phase_figure",
    "gpu_phase_started",
    "gpu_reconciliation",
    "gpu_section",
    "gpu_snapshot_peak",
    "gpu_time_per_line",
    "install_cap",
    "install_snapshot",
    "no_gpu_line",
    "open_nvml",
    "read_gpu_records",
    "read_gpu_snapshot",
    "start_nvml_sampler",
    "under_gpu_cap",
]

__getattr__, __dir__ = _lazy.attach(__name__, _NAMES)
