"""The GPU peak of a cell, where torch with CUDA is present, behind one small interface.

``GpuMonitor`` is what the magics use; ``TorchCudaMonitor`` is the real one, and tests inject a
fake. The figure is torch's caching allocator's own high-water mark (``max_memory_allocated``,
reset per cell with ``reset_peak_memory_stats``): exact for tensors, without the CUDA context
(500 MiB and more, see docs/gpu-facts.md) or other libraries' allocations, which only NVML sees.

The monitor never imports torch and never initialises CUDA: importing torch costs a second and
hundreds of MiB, and a CUDA context more, all of which would be measured as the cell's own. A
cell that never touched CUDA has no GPU figure.

Where a torch tracker runs in the kernel (``memgauge.torch``, a measured block), the cell is a
window of the tracker's ``GpuLog`` (``window_open``/``window_close``, read through its
``CudaSource``, docs/gpu.md): resetting the peaks behind the tracker's back would cut its step and
phase windows short, and the log folds every reset into every open window, the cell's included.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

from memgauge._units import format_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.sections.gpu._capture_log import GpuLog


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
    imported torch and CUDA is initialised (``modules`` is injectable: tests pass a fake torch;
    with the real ``sys.modules``, a running torch tracker's log is used, see above)."""

    def __init__(self, modules: Mapping[str, ModuleType] | None = None) -> None:
        self._modules = sys.modules if modules is None else modules
        self._start: tuple[int, ...] = ()
        self._log: GpuLog | None = None

    def _tracker_log(self) -> GpuLog | None:
        if self._modules is not sys.modules or "torch" not in sys.modules:
            return None
        from memgauge.sections.gpu._capture_log import GpuLog
        from memgauge.sections.torch import active_torch_tracker

        tracker = active_torch_tracker()
        log = None if tracker is None else tracker.gpu
        return log if isinstance(log, GpuLog) else None

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
        self._log = self._tracker_log()
        if self._log is not None:
            self._start = window_start(self._log, self)
            return
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
        if self._log is not None:
            log, self._log = self._log, None
            return window_peak(log, self, self._start)
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


def window_start(log: GpuLog, key: object) -> tuple[int, ...]:
    """Open the window ``key`` on a tracker's log; what each device holds as it begins (empty
    where CUDA is not initialised yet)."""
    log.window_open(key)
    try:
        source = log.source
        if not source.initialized():
            return ()
        return tuple(source.stats(d)["allocated_bytes.all.current"] for d in range(source.device_count()))
    except Exception:  # a failing torch.cuda: no GPU figure, never a failed cell
        return ()


def window_peak(log: GpuLog, key: object, start: tuple[int, ...]) -> GpuPeak | None:
    """Close the window ``key``: its peaks per device (None: CUDA never ran in it)."""
    peaks = log.window_close(key)
    if not peaks:
        return None
    devices = range(max(peaks) + 1)
    empty = {"allocated_peak": 0, "reserved_peak": 0}
    return GpuPeak(
        peak_allocated_bytes=tuple(peaks.get(d, empty)["allocated_peak"] for d in devices),
        start_allocated_bytes=start if len(start) == len(devices) else tuple(0 for _ in devices),
        peak_reserved_bytes=tuple(peaks.get(d, empty)["reserved_peak"] for d in devices),
        method="torch.cuda.memory_stats through the torch tracker's log, a window per block",
    )


class NoGpu:
    """The monitor where no GPU figure is wanted."""

    def start(self) -> None:
        pass

    def stop(self) -> GpuPeak | None:
        return None
