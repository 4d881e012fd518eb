"""The GPU peak of a cell, where torch with CUDA is present, behind one small interface.

``GpuMonitor`` is what the magics use; ``TorchCudaMonitor`` is the real one, and tests inject a
fake. The figure is torch's caching allocator's own high-water mark (``max_memory_allocated``,
reset per cell with ``reset_peak_memory_stats``): exact for tensors, without the CUDA context
(500 MiB and more, see docs/gpu-facts.md) or other libraries' allocations, which only NVML sees.

The monitor never imports torch and never initialises CUDA: importing torch costs a second and
hundreds of MiB, and a CUDA context more, all of which would be measured as the cell's own. A
cell that never touched CUDA has no GPU figure.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

from memgauge._units import format_bytes


@dataclass(frozen=True)
class GpuPeak:
    """GPU memory of one measured block, per CUDA device (index order)."""

    # the largest that torch's tensors held at once during the block, per device
    peak_allocated_bytes: tuple[int, ...]
    # what the tensors held when the block began (0 where CUDA started in the block)
    start_allocated_bytes: tuple[int, ...]
    # the caching allocator's largest reservation from the driver during the block, per device
    peak_reserved_bytes: tuple[int, ...]
    method: str = "torch.cuda.max_memory_allocated, reset per block"

    @property
    def peak_bytes(self) -> int:
        """The sum of the per-device peaks: exact on one device, an upper bound on several (the
        devices need not peak at the same moment)."""
        return sum(self.peak_allocated_bytes)

    @property
    def increment_bytes(self) -> int:
        return sum(self.peak_allocated_bytes) - sum(self.start_allocated_bytes)

    def describe(self) -> str:
        devices = len(self.peak_allocated_bytes)
        where = "" if devices == 1 else f" on {devices} devices"
        added = format_bytes(self.increment_bytes, signed=True)
        reserved = format_bytes(sum(self.peak_reserved_bytes))
        return f"GPU peak {format_bytes(self.peak_bytes)}{where} ({added}, reserved {reserved})"


class GpuMonitor(Protocol):
    """Measures the GPU peak of one block: ``start()`` before it, ``stop()`` after it."""

    def start(self) -> None: ...

    def stop(self) -> GpuPeak | None:
        """The block's figures, or None where the block used no GPU (or none is present)."""
        ...


class TorchCudaMonitor:
    """torch's caching allocator on every CUDA device, read only where the program already
    imported torch and CUDA is initialised (``modules`` is injectable: tests pass a fake torch)."""

    def __init__(self, modules: Mapping[str, ModuleType] | None = None) -> None:
        self._modules = sys.modules if modules is None else modules
        self._start: tuple[int, ...] = ()

    def _cuda(self) -> Any:
        torch = self._modules.get("torch")
        cuda = getattr(torch, "cuda", None)
        if cuda is None:
            return None
        try:
            # is_initialized, not is_available: the latter is cheap too, but only an initialised
            # context has anything to read, and reading must never create one
            return cuda if cuda.is_initialized() else None
        except Exception:  # a broken or partial torch install: no GPU figure, never a failed cell
            return None

    def start(self) -> None:
        self._start = ()
        cuda = self._cuda()
        if cuda is None:
            return
        start = []
        for device in range(cuda.device_count()):
            # resets the peak to what is held now (not to 0): the peak then covers the block only
            cuda.reset_peak_memory_stats(device)
            start.append(int(cuda.memory_allocated(device)))
        self._start = tuple(start)

    def stop(self) -> GpuPeak | None:
        cuda = self._cuda()
        if cuda is None:
            return None
        # CUDA initialised during the block: its allocator's statistics began with the block
        devices = range(cuda.device_count())
        start = self._start if len(self._start) == len(devices) else tuple(0 for _ in devices)
        return GpuPeak(
            peak_allocated_bytes=tuple(int(cuda.max_memory_allocated(d)) for d in devices),
            start_allocated_bytes=start,
            peak_reserved_bytes=tuple(int(cuda.max_memory_reserved(d)) for d in devices),
        )


class NoGpu:
    """The monitor where no GPU figure is wanted."""

    def start(self) -> None:
        pass

    def stop(self) -> GpuPeak | None:
        return None
