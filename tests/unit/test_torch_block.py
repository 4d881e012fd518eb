"""``memgauge.profile()`` fills ``Profile.torch`` from this process's tracker: exact parameter,
gradient and Adam bytes of a model built in this test, the block's own steps, and no hooks left
behind by a block that started the tracker."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
import torch

import memgauge
from memgauge.sections.torch import active_torch_tracker, start_tracking, stop_tracking

D, L, B = 64, 2, 8
F32 = 4


def _train(steps: int) -> tuple[int, int]:
    """Trains a stack of Linear layers; returns its parameter bytes and Adam's state bytes."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(D, D) for _ in range(L)])
    opt = torch.optim.Adam(model.parameters())
    x = torch.randn(B, D)
    for _ in range(steps):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
    params = L * (D * D + D) * F32  # by construction
    return params, 2 * params + 2 * L * F32  # exp_avg, exp_avg_sq and one 4-byte step per parameter


def test_a_block_fills_profile_torch_and_leaves_no_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMGAUGE_TORCH", raising=False)
    assert active_torch_tracker() is None
    with memgauge.profile(sample=False) as prof:
        params, state = _train(3)
    torch_ = prof.profile.torch if prof.profile is not None else None
    assert torch_ is not None
    assert torch_.mode == "summary"
    assert torch_.max_by_role["parameters"] == params
    assert torch_.max_by_role["gradients"] == params
    assert torch_.max_by_role["optimizer_state"] == state
    assert len(torch_.steps) == 3 and all(s.start_seconds >= 0 for s in torch_.steps)
    assert torch_.notes == []
    # the block started the tracker and disconnected it: the program after it runs unhooked
    assert active_torch_tracker() is None
    with memgauge.profile(sample=False) as again:
        _train(1)
    assert again.profile is not None and again.profile.torch is not None
    assert len(again.profile.torch.steps) == 1


def test_torch_off_gives_no_torch_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGAUGE_TORCH", "off")
    with memgauge.profile(sample=False) as prof:
        _train(1)
    assert prof.profile is not None and prof.profile.torch is None


def test_a_block_inside_a_tracked_run_keeps_its_own_steps_and_says_the_peak_is_shared() -> None:
    tracker = start_tracking("summary", "")
    assert tracker is not None
    try:
        _train(2)
        with memgauge.profile(sample=False) as prof:
            _train(1)
        assert prof.profile is not None and prof.profile.torch is not None
        assert len(prof.profile.torch.steps) == 1
        assert "before this block" in prof.profile.torch.notes[0]
        assert active_torch_tracker() is tracker  # not the block's to stop
    finally:
        stop_tracking(tracker)
