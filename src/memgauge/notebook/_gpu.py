"""The GPU section's cell monitor, as the notebook extension offers it (``GpuPeak`` and
``GpuMonitor`` are its users' names: ``use_gpu_monitor`` takes one): the one module of the
extension that names the section."""

from __future__ import annotations

from memgauge.sections.gpu import GpuMonitor, GpuPeak, NoGpu, TorchCudaMonitor

__all__ = ["GpuMonitor", "GpuPeak", "NoGpu", "TorchCudaMonitor"]
