"""The torch tracker in this process, on real CPU models whose sizes are known by construction:
parameters, gradients and Adam state exact to the byte, activations saved for backward against
what autograd saved, views and slices counted once, a tensor only autograd holds, nothing kept
alive, steps told apart, a step leak named with its line, OOM messages parsed."""

from __future__ import annotations

import gc
import time
import weakref
from collections.abc import Iterator

import pytest

pytest.importorskip("torch")
import torch

from memgauge.model import Profile
from memgauge.sections.torch import TorchMemory, torch_memory, torch_step_leak
from memgauge.sections.torch._capture import set_torch_tracker, step
from memgauge.sections.torch._capture_oom import oom_device, requested_bytes
from memgauge.sections.torch._capture_track import Tracker
from tests.torch_tracking import connected

D, B, L = 128, 32, 3
F32 = 4


@pytest.fixture(params=["summary", "full"])
def tracker(request: pytest.FixtureRequest) -> Iterator[Tracker]:
    with connected(request.param) as t:
        yield t


def _mlp() -> torch.nn.Sequential:
    torch.manual_seed(0)
    return torch.nn.Sequential(*[m for _ in range(L) for m in (torch.nn.Linear(D, D), torch.nn.ReLU())])


def _train(model: torch.nn.Module, opt: torch.optim.Optimizer, x: torch.Tensor, steps: int) -> None:
    for _ in range(steps):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()


def test_parameters_gradients_and_adam_state_are_exact_to_the_byte(tracker: Tracker) -> None:
    model = _mlp()
    opt = torch.optim.Adam(model.parameters())
    x = torch.randn(B, D)
    _train(model, opt, x, 3)
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    assert params == L * (D * D + D) * F32  # by construction
    state = sum(v.untyped_storage().nbytes() for s in opt.state.values() for v in s.values())
    # Adam: exp_avg and exp_avg_sq the size of each parameter, plus one scalar `step` per parameter
    assert state == 2 * params + 2 * L * F32
    record = tracker.record()
    assert record["max_by_role"]["parameters"] == params
    assert record["max_by_role"]["gradients"] == params
    assert record["max_by_role"]["optimizer_state"] == state
    assert record["end_by_role"]["parameters"] == params
    assert record["peak_by_role"]["optimizer_state"] == state


def test_activations_match_what_autograd_saved(tracker: Tracker) -> None:
    model = _mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(B, D)
    _train(model, opt, x, 2)
    # each Linear saves its input (x, then each ReLU's output, which that ReLU saves too) and the
    # last ReLU's output is saved again by pow: L + 1 distinct (B, D) storages
    truth = (L + 1) * B * D * F32
    got = tracker.record()["max_by_role"]["activations"]
    assert abs(got - truth) <= 0.1 * truth, (got, truth)


def test_steps_are_found_with_forward_backward_and_optimizer_apart(tracker: Tracker) -> None:
    model = _mlp()
    opt = torch.optim.Adam(model.parameters())
    _train(model, opt, torch.randn(B, D), 4)
    steps = tracker.record()["steps"]
    assert len(steps) == 4
    for s in steps:
        assert s["kind"] == "optimizer" and s["seconds"] > 0
        assert s["forward_seconds"] > 0 and s["backward_seconds"] > 0 and s["optimizer_seconds"] > 0
        assert s["forward_seconds"] + s["backward_seconds"] + s["optimizer_seconds"] <= s["seconds"] + 1e-6
        assert s["peak_bytes"] >= s["end_bytes"] > 0


def test_memgauge_step_ends_a_step_without_an_optimizer(tracker: Tracker) -> None:
    model = _mlp()
    with torch.no_grad():
        for _ in range(3):
            model(torch.randn(B, D))
            step()
    assert [s["kind"] for s in tracker.record()["steps"]] == ["explicit"] * 3


def test_step_is_a_no_op_when_nothing_is_measured() -> None:
    set_torch_tracker(None)
    started = time.perf_counter()
    for _ in range(100_000):
        step()
    assert time.perf_counter() - started < 1.0


def test_a_view_costs_nothing_and_a_slice_keeps_its_base(tracker: Tracker) -> None:
    from memgauge import torch as mgt

    base = torch.zeros(1 << 18)  # 1 MiB
    before = mgt.tensors()
    view = base.view(512, 512)
    small = base[:10].clone()
    piece = base[:10]  # a slice: keeps the whole 1 MiB
    del base
    after = mgt.tensors()
    diff = mgt.diff(before, after)
    # only the clone is new: the view and the slice share the base's storage
    assert diff.result.added_bytes == 10 * F32 and diff.result.removed_bytes == 0
    found = [t for t in after.tensors if t.bytes == 1 << 20]
    assert len(found) == 1 and found[0].shape == [1 << 18]
    assert "Size:(10,)" in str(diff) and "Memory:" in str(diff)
    del view, piece, small


def test_a_tensor_only_autograd_holds_is_listed_and_then_freed(tracker: Tracker) -> None:
    from memgauge import torch as mgt

    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(256, 96))

        def forward(self, n: int) -> torch.Tensor:
            # 64 KiB made here, saved by the matmul (for w's gradient) and held by nothing else
            return (torch.randn(n, 256) @ self.w).sum()

    loss = Block()(64)
    held = [t for t in mgt.tensors().tensors if t.shape == [64, 256]]
    assert len(held) == 1 and held[0].role == "activations" and held[0].bytes == 64 * 256 * F32
    loss.backward()
    del loss
    assert not [t for t in mgt.tensors().tensors if t.shape == [64, 256]]


def test_no_tensor_is_kept_alive(tracker: Tracker) -> None:
    model = _mlp()
    opt = torch.optim.Adam(model.parameters())
    x = torch.randn(B, D)
    _train(model, opt, x, 2)
    out = model(x)
    refs = [weakref.ref(out.untyped_storage()), weakref.ref(x.untyped_storage())]
    refs += [weakref.ref(s) for s in [p.untyped_storage() for p in model.parameters()]]
    del model, opt, x, out
    gc.collect()
    assert all(r() is None for r in refs)
    assert tracker.total == 0 or tracker.record()["end_by_role"]["parameters"] == 0


def test_a_step_leak_is_named_with_the_line_that_keeps_the_tensors(tracker: Tracker) -> None:
    model = _mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.001)
    x = torch.randn(B, D)
    t0 = time.monotonic()
    kept = []
    for _ in range(8):
        opt.zero_grad()
        out = model(x)  # LEAK: each step's activations stay alive through `kept`
        loss = out.pow(2).mean()
        loss.backward(retain_graph=True)
        kept.append(loss)  # the graph, and every tensor it saved, survives the step
        opt.step()
    memory = torch_memory(tracker.record(), t0)
    leak = torch_step_leak(memory)
    assert leak is not None
    assert leak.bytes_per_step >= L * B * D * F32
    assert leak.line.endswith(f"test_torch_capture.py:{_line_of('# LEAK:')}")
    assert "activations" in leak.roles
    no_leak = TorchMemory(mode="summary", pid=1, peak_bytes=0)
    assert torch_step_leak(no_leak) is None


def _line_of(tag: str) -> int:
    with open(__file__, encoding="utf-8") as f:
        for n, text in enumerate(f, 1):
            if tag in text and "_line_of" not in text:
                return n
    raise AssertionError(tag)


def test_profile_round_trip_and_a_profile_without_torch_has_no_torch_key(tracker: Tracker) -> None:
    model = _mlp()
    _train(model, torch.optim.Adam(model.parameters()), torch.randn(B, D), 2)
    memory = torch_memory(tracker.record(), time.monotonic())
    profile = Profile.from_dict(
        {
            "schema_version": 5,  # before the envelope
            "command": ["x"],
            "exit": {"code": 0},
            "wall_seconds": 1.0,
            "cpu": {},
            "peak": {},
        }
    )
    assert "torch" not in profile.to_dict()
    profile.torch = memory
    data = profile.to_dict()
    assert set(data["torch"]["peak_by_role"]) == {
        "parameters", "gradients", "optimizer_state", "activations", "temporaries", "other"
    }  # fmt: skip
    assert all({"peak_bytes", "seconds"} <= set(s) for s in data["torch"]["steps"])
    assert Profile.from_dict(data) == profile


CPU_OOM = (
    "[enforce fail at alloc_cpu.cpp:121] data. DefaultCPUAllocator: can't allocate memory: you tried "
    "to allocate 8589934592 bytes. Error code 12 (Cannot allocate memory)"
)
# verbatim from docs/gpu-facts.md (current format, with a memory fraction), and the older format
CUDA_OOM = (
    "CUDA out of memory. Tried to allocate 1024.00 MiB. GPU 0 has a total capacity of 79.18 GiB of which "
    "77.17 GiB is free. Including non-PyTorch memory, this process has 2.00 GiB memory in use. 2.00 GiB "
    "allowed; Of the allocated memory 1.40 GiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch "
    "but unallocated."
)
CUDA_OOM_OLD = (
    "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 1; 15.78 GiB total capacity; 14.56 GiB already "
    "allocated; 3.50 MiB free; 14.70 GiB reserved in total by PyTorch)"
)


def test_out_of_memory_messages_give_the_requested_size_and_device() -> None:
    assert requested_bytes(CPU_OOM) == 8589934592 and oom_device(CPU_OOM) == "cpu"
    assert requested_bytes(CUDA_OOM) == 1024 << 20 and oom_device(CUDA_OOM) == "cuda:0"
    assert requested_bytes(CUDA_OOM_OLD) == 20 << 20 and oom_device(CUDA_OOM_OLD) == "cuda:1"
    assert requested_bytes("something else") is None


def test_an_out_of_memory_error_in_a_forward_is_recorded_with_what_was_held(tracker: Tracker) -> None:
    class Huge(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.new_empty(1 << 60)  # the CPU allocator refuses it at once

    model = torch.nn.Sequential(torch.nn.Linear(D, D), Huge())
    with pytest.raises(RuntimeError, match="DefaultCPUAllocator"):
        model(torch.randn(B, D))
    oom = tracker.record()["oom"]
    assert oom["requested_bytes"] == 4 << 60 and oom["device"] == "cpu"
    assert oom["by_role"]["parameters"] == (D * D + D) * F32
    assert oom["tensors"] and oom["tensors"][0]["bytes"] == D * D * F32


def test_a_forward_never_followed_by_backward_frees_its_outputs(tracker: Tracker) -> None:
    # evaluation with grad enabled: ReLU saves its own output; packed as itself it would leak
    model = _mlp()
    out = model(torch.randn(B, D))
    ref = weakref.ref(out.untyped_storage())
    del out
    gc.collect()
    assert ref() is None


def test_double_backward_is_unchanged_under_tracking(tracker: Tracker) -> None:
    def penalty_grad() -> torch.Tensor:
        torch.manual_seed(1)
        first = torch.nn.Linear(8, 8)
        model = torch.nn.Sequential(first, torch.nn.Tanh(), torch.nn.Linear(8, 1))
        x = torch.randn(4, 8, requires_grad=True)
        (g,) = torch.autograd.grad(model(x).sum(), x, create_graph=True)
        torch.autograd.backward((g**2).sum())
        weight = first.weight.grad
        assert weight is not None
        return weight.clone()

    tracked = penalty_grad()
    tracker.hooks.uninstall()
    try:
        assert torch.allclose(tracked, penalty_grad())
    finally:
        tracker.hooks.install()


@pytest.mark.gpu
def test_cuda_parameters_gradients_and_adam_state_are_exact(tracker: Tracker) -> None:
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    model = _mlp().cuda()
    opt = torch.optim.Adam(model.parameters())
    _train(model, opt, torch.randn(B, D, device="cuda"), 3)
    params = sum(p.untyped_storage().nbytes() for p in model.parameters())
    state = sum(v.untyped_storage().nbytes() for s in opt.state.values() for v in s.values())
    record = tracker.record()
    assert "cuda:0" in record["devices"]
    assert record["max_by_role"]["parameters"] == params == L * (D * D + D) * F32
    assert record["max_by_role"]["gradients"] == params
    assert record["max_by_role"]["optimizer_state"] == state
    truth = (L + 1) * B * D * F32
    assert abs(record["max_by_role"]["activations"] - truth) <= 0.1 * truth
