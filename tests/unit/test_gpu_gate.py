"""``gpu=`` budgets judged for real: the process's peak on the device (NVML) with the allocator's
figure beside it, and ``--enforce``: torch's allocator capped in the program, through a fake
``torch.cuda`` with the functions the cap calls (and, where torch is installed, the real one's
queue of calls that run when CUDA initialises)."""

from __future__ import annotations

import types
from typing import Any

import pytest

from memgauge._env import ENV_GPU_CAP
from memgauge.gate import judge, judge_runs, parse_budget
from memgauge.sections.gpu import GpuDevice, install_cap
from tests.factories import make_profile

MIB = 1 << 20
H100_TOTAL = 85_017_493_504  # torch's total_memory on the H100 of docs/gpu-facts.md


def on_gpu(process: int | None, reserved: int | None = 400 * MIB, **fields: Any) -> Any:
    return make_profile(gpu=[GpuDevice(index=0, process_peak=process, reserved_peak=reserved, **fields)])


@pytest.mark.parametrize(("limit", "status"), [("gpu=1GiB", "fail"), ("gpu=1100MiB", "pass")])
def test_a_gpu_limit_judges_the_process_peak(limit: str, status: str) -> None:
    (result,) = judge(on_gpu(1100 * MIB), parse_budget(limit)).results
    assert (result.measured, result.status) == (1100 * MIB, status)
    assert result.note == "process peak on device 0 (NVML); torch reserved 400 MiB"


def test_the_largest_device_is_judged() -> None:
    profile = make_profile(
        gpu=[GpuDevice(index=0, process_peak=900 * MIB), GpuDevice(index=1, process_peak=1500 * MIB)]
    )
    (result,) = judge(profile, parse_budget("gpu=1GiB")).results
    assert (result.measured, result.status) == (1500 * MIB, "fail")
    assert "device 1" in result.note


def test_without_nvml_torch_reserved_is_judged_as_a_lower_bound() -> None:
    (result,) = judge(on_gpu(None, 1200 * MIB), parse_budget("gpu=1GiB")).results
    assert (result.measured, result.status) == (1200 * MIB, "fail")
    assert "lower bound" in result.note


def test_a_phase_gpu_limit_and_a_run_without_gpu_are_unmeasured() -> None:
    phase, whole = judge(make_profile(), parse_budget("fit.gpu=1GiB gpu=1GiB")).results
    assert (phase.status, whole.status) == ("unmeasured", "unmeasured")
    assert phase.note == "no GPU figure in this profile (no GPU used by the run)"
    assert whole.note == "no GPU figure in this profile (no GPU used by the run)"


def test_out_of_memory_under_the_cap_fails_whatever_the_figure() -> None:
    capped = on_gpu(700 * MIB, ooms=2, cap_bytes=1024 * MIB, cap_outcome="out of memory")
    (result,) = judge(capped, parse_budget("gpu=1GiB")).results
    assert result.status == "fail"
    assert result.note.startswith(
        "out of memory under --enforce: torch's reserve capped at 1.0 GiB on device 0"
    )


def test_surviving_the_cap_passes_and_says_so() -> None:
    fine = on_gpu(900 * MIB, cap_bytes=1024 * MIB, cap_outcome="survived")
    (result,) = judge_runs([fine, fine], parse_budget("gpu=1GiB")).results
    assert result.status == "pass"
    assert result.note.startswith("survived --enforce: torch's reserve capped at 1.0 GiB")


class FakeCuda:
    """torch.cuda's functions the cap uses, recording what they were asked."""

    def __init__(self, initialized: bool, totals: list[int]) -> None:
        self.initialized = initialized
        self.totals = totals
        self.fractions: list[tuple[float, int]] = []
        self.queued: list[Any] = []

    def is_initialized(self) -> bool:
        return self.initialized

    def device_count(self) -> int:
        return len(self.totals)

    def get_device_properties(self, device: int) -> Any:
        return types.SimpleNamespace(total_memory=self.totals[device])

    def set_per_process_memory_fraction(self, fraction: float, device: int) -> None:
        self.fractions.append((fraction, device))

    def _lazy_call(self, call: Any) -> None:
        self.queued.append(call)


def test_the_cap_waits_for_the_program_to_initialise_cuda() -> None:
    cuda = FakeCuda(False, [H100_TOTAL, 2 * H100_TOTAL])
    limit = install_cap(types.SimpleNamespace(cuda=cuda), {ENV_GPU_CAP: str(2 << 30)})
    assert limit == 2 << 30
    assert cuda.fractions == []  # memgauge never initialises CUDA
    (call,) = cuda.queued
    call()
    # gpu-facts: 2 GiB on the H100 is a fraction of 0.025259
    assert [round(f, 6) for f, _ in cuda.fractions] == [0.025259, 0.012630]
    assert [d for _, d in cuda.fractions] == [0, 1]


def test_the_cap_applies_at_once_where_cuda_runs_and_never_above_one() -> None:
    cuda = FakeCuda(True, [1 << 30])
    install_cap(types.SimpleNamespace(cuda=cuda), {ENV_GPU_CAP: str(2 << 30)})
    assert cuda.fractions == [(1.0, 0)]
    assert install_cap(types.SimpleNamespace(cuda=cuda), {}) is None


def test_the_real_torch_queues_the_cap_without_initialising_cuda() -> None:
    torch = pytest.importorskip("torch")
    before = len(torch.cuda._queued_calls)
    install_cap(torch, {ENV_GPU_CAP: str(1 << 30)})
    try:
        assert not torch.cuda.is_initialized()
        assert len(torch.cuda._queued_calls) == before + 1
    finally:
        del torch.cuda._queued_calls[before:]
