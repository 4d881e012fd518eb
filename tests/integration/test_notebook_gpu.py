"""The GPU peak of a notebook cell: ``TorchCudaMonitor`` against a fake torch (its logic: never
initialising CUDA, reading every device, a context started inside the block), the magics' use of
an injected monitor, and, marked ``gpu``, the real torch.cuda on a known allocation."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import pytest

from memgauge.notebook import measure
from memgauge.sections.gpu import GpuPeak, NoGpu, TorchCudaMonitor

MIB = 1 << 20


class FakeCuda:
    """torch.cuda's allocator statistics for ``devices`` devices, driven by the test."""

    def __init__(self, devices: int = 1, initialized: bool = True) -> None:
        self.initialized = initialized
        self.allocated = [0] * devices
        self.peak = [0] * devices
        self.reserved_peak = [0] * devices
        self.calls: list[str] = []

    def is_initialized(self) -> bool:
        return self.initialized

    def device_count(self) -> int:
        return len(self.allocated)

    def reset_peak_memory_stats(self, device: int) -> None:
        assert self.initialized, "reset on an uninitialised CUDA would create a context"
        self.calls.append(f"reset {device}")
        self.peak[device] = self.allocated[device]  # as torch does: to what is held, not 0
        self.reserved_peak[device] = self.allocated[device]

    def memory_allocated(self, device: int) -> int:
        return self.allocated[device]

    def max_memory_allocated(self, device: int) -> int:
        return self.peak[device]

    def max_memory_reserved(self, device: int) -> int:
        return self.reserved_peak[device]

    def allocate(self, device: int, size: int) -> None:
        self.allocated[device] += size
        self.peak[device] = max(self.peak[device], self.allocated[device])
        self.reserved_peak[device] = max(self.reserved_peak[device], self.allocated[device] + 2 * MIB)


def test_without_torch_there_is_no_gpu_figure() -> None:
    monitor = TorchCudaMonitor(modules={})
    monitor.start()
    assert monitor.stop() is None
    assert NoGpu().stop() is None


def test_uninitialised_cuda_is_never_touched() -> None:
    cuda = FakeCuda(initialized=False)
    monitor = TorchCudaMonitor(modules={"torch": SimpleNamespace(cuda=cuda)})  # type: ignore[dict-item]
    monitor.start()
    assert monitor.stop() is None
    assert cuda.calls == []


def test_peak_and_increment_of_a_block_on_each_device() -> None:
    cuda = FakeCuda(devices=2)
    cuda.allocate(0, 100 * MIB)  # held before the block, and a peak the block must not report
    cuda.peak[0] = 900 * MIB
    monitor = TorchCudaMonitor(modules={"torch": SimpleNamespace(cuda=cuda)})  # type: ignore[dict-item]

    def block() -> None:
        cuda.allocate(0, 256 * MIB)
        cuda.allocate(0, -256 * MIB)
        cuda.allocate(1, 64 * MIB)

    m = measure(block, gpu=monitor)
    assert m.gpu == GpuPeak(
        peak_allocated_bytes=(356 * MIB, 64 * MIB),
        start_allocated_bytes=(100 * MIB, 0),
        peak_reserved_bytes=(358 * MIB, 66 * MIB),
    )
    assert m.gpu.increment_bytes == 320 * MIB
    assert m.gpu.describe() == "GPU peak 420 MiB on 2 devices (+320 MiB, reserved 424 MiB)"
    assert cuda.calls == ["reset 0", "reset 1"]


def test_cuda_started_inside_the_block_counts_from_zero() -> None:
    cuda = FakeCuda(initialized=False)
    monitor = TorchCudaMonitor(modules={"torch": SimpleNamespace(cuda=cuda)})  # type: ignore[dict-item]

    def block() -> None:
        cuda.initialized = True
        cuda.allocate(0, 512 * MIB)

    m = measure(block, gpu=monitor)
    assert m.gpu is not None
    assert (m.gpu.peak_bytes, m.gpu.increment_bytes) == (512 * MIB, 512 * MIB)


def test_a_broken_torch_gives_no_figure_and_never_fails_the_cell() -> None:
    class Broken:
        def is_initialized(self) -> bool:
            raise RuntimeError("driver mismatch")

    monitor = TorchCudaMonitor(modules={"torch": SimpleNamespace(cuda=Broken())})  # type: ignore[dict-item]
    m = measure(lambda: 42, gpu=monitor)
    assert (m.value, m.gpu, m.error) == (42, None, None)


_REAL = """
import json, torch
from memgauge.notebook import TorchCudaMonitor, measure
MIB = 1 << 20
torch.cuda.init()
held = torch.ones(64 * MIB // 4, device="cuda")  # 64 MiB held before the block
monitor = TorchCudaMonitor()

def block():
    spike = torch.ones(256 * MIB // 4, device="cuda")  # 256 MiB, freed at the block's end
    return float(spike.sum().item())

m = measure(block, gpu=monitor)
print(json.dumps([m.value, m.gpu.peak_allocated_bytes, m.gpu.start_allocated_bytes,
                  m.gpu.peak_reserved_bytes, torch.cuda.memory_allocated()]))
"""


@pytest.mark.gpu
def test_real_cuda_peak_of_a_known_tensor() -> None:
    torch: Any = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device here")
    # a fresh process: this one's CUDA state (or its absence) is left alone
    out = subprocess.run([sys.executable, "-c", _REAL], capture_output=True, text=True, check=True).stdout
    import json

    value, peak, start, reserved, after = json.loads(out)
    assert value == 256 * MIB // 4
    assert start == [64 * MIB]
    # the block's tensor, plus the sum's own small result (one 512-byte block of the allocator)
    assert 320 * MIB <= peak[0] <= 320 * MIB + 2 * MIB
    assert reserved[0] >= peak[0]
    assert after == 64 * MIB  # the block's tensors freed with it, the held one kept
    print(f"GPU peak {peak[0]} B for 320 MiB known ({peak[0] - 320 * MIB} B over)")
