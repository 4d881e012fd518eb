"""The torch tracker follows some steps tensor by tensor (``sections/torch/_capture_sampling``): the policy on
its own, then a real tracker on real CPU training loops, steady and leaking."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

pytest.importorskip("torch")
import torch

from memgauge._env import ENV_TORCH_STEPS
from memgauge.capture._wire import WritePace
from memgauge.sections.torch import torch_step_leak
from memgauge.sections.torch._capture_sampling import (
    EVERY,
    FIRST,
    HOLD,
    MEMORY_EVERY,
    MEMORY_STEPS,
    StepSampling,
)
from memgauge.sections.torch._capture_track import Tracker
from memgauge.sections.torch._read import torch_memory
from tests.torch_tracking import connected

MIB = 1 << 20


def _tracked(policy: StepSampling, levels: list[int]) -> list[int]:
    """The steps followed when step i ends at memory ``levels[i]`` (step 0 always is)."""
    out = [0]
    for ended, level in enumerate(levels[:-1]):
        if policy.next_tracked(ended, level):
            out.append(ended + 1)
    return out


def test_the_first_steps_then_one_in_every() -> None:
    steps = _tracked(StepSampling(), [100 * MIB] * (3 * EVERY + 10))
    assert steps == [*range(FIRST), EVERY, 2 * EVERY, 3 * EVERY]
    assert EVERY == 50 and FIRST == 10
    # the tests below take one in 20, so that their steps are few and their numbers legible
    assert _tracked(StepSampling(every=20), [100 * MIB] * 70) == [*range(FIRST), 20, 40, 60]


def test_a_new_high_is_followed_for_the_next_steps_and_a_return_to_it_is_not() -> None:
    levels = [100 * MIB] * 30 + [110 * MIB] * 40  # steps 30 on: 10 MiB above (> 1 MiB and > 2%)
    steps = _tracked(StepSampling(every=20), levels)
    assert [s for s in steps if s >= FIRST] == [20, *range(31, 31 + HOLD), 60]
    swings = [100 * MIB, 110 * MIB] * 35  # up and down every step: only the first high is news
    steps = _tracked(StepSampling(every=20), swings)
    assert [s for s in steps if s >= FIRST] == [20, 40, 60]  # and that was in the first steps


def test_a_rise_in_the_first_steps_is_warm_up_not_a_reason_to_hold() -> None:
    # optimizer state made in step 1, then steady: the first steps are followed anyway
    levels = [100 * MIB] + [150 * MIB] * 69
    assert _tracked(StepSampling(every=20), levels) == [*range(FIRST), 20, 40, 60]
    # a rise at the last of the first steps' ends is the steady steps' first: held
    levels = [100 * MIB] * FIRST + [150 * MIB] * 60
    held = range(FIRST + 1, FIRST + 1 + HOLD)
    assert _tracked(StepSampling(every=20), levels) == [*range(FIRST), *held, 40, 60]


def test_a_rise_below_the_threshold_waits_until_it_adds_up() -> None:
    # 0.5 MiB a step on 40 MiB: the threshold is 1 MiB (2% is 0.8 MiB), crossed every 3rd step
    levels = [40 * MIB + i * MIB // 2 for i in range(70)]
    steps = _tracked(StepSampling(every=20), levels)
    # each crossing after the first steps extends the hold: a leak is followed throughout
    assert steps == [*range(FIRST), *range(FIRST + 2, 70)]


def test_the_memory_level_is_read_at_most_every_so_often() -> None:
    # steps of a millisecond: every MEMORY_STEPS steps
    policy = StepSampling()
    assert [i for i in range(30) if policy.memory_due(i, i * 0.001)] == list(range(0, 30, MEMORY_STEPS))
    # longer steps, MEMORY_EVERY seconds before MEMORY_STEPS steps: every MEMORY_EVERY seconds
    policy = StepSampling()
    period = MEMORY_STEPS - 1
    step = MEMORY_EVERY / period + 1e-6
    assert [i for i in range(30) if policy.memory_due(i, i * step)] == list(range(0, 30, period))
    # longer steps: every one
    policy = StepSampling()
    assert all(policy.memory_due(i, i * MEMORY_EVERY) for i in range(10))
    # a step's end whose level was not read (-1) changes nothing: the hold waits for a read
    levels = [100 * MIB] * 30 + [-1] * 5 + [110 * MIB] * 35
    steps = _tracked(StepSampling(every=20), levels)
    assert [s for s in steps if s >= FIRST] == [20, *range(36, 36 + HOLD), 60]


@pytest.mark.parametrize(
    ("value", "every"), [("all", 1), ("ALL", 1), ("5", 5), ("0", EVERY), ("x", EVERY), ("", EVERY)]
)
def test_the_environment_sets_how_many_steps(monkeypatch: pytest.MonkeyPatch, value: str, every: int) -> None:
    monkeypatch.setenv(ENV_TORCH_STEPS, value)
    assert StepSampling.from_env().every == every


@pytest.fixture
def tracker(monkeypatch: pytest.MonkeyPatch) -> Iterator[Tracker]:
    monkeypatch.setenv(ENV_TORCH_STEPS, "20")  # one in 20: steps 20 and 40 in a loop of 45
    with connected() as t:
        yield t


def _model(d: int) -> torch.nn.Sequential:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(d, d), torch.nn.ReLU(), torch.nn.Linear(d, d))


def test_a_steady_loop_lists_a_sample_and_counts_every_step(tracker: Tracker) -> None:
    model = _model(64)
    opt = torch.optim.Adam(model.parameters())
    x = torch.randn(16, 64)
    hooked_between = []
    for step in range(45):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
        if step in (12, 19):  # step 13 is not followed: the module and gradient hooks are off
            hooks = tracker.hooks
            unhooked = all(not p._post_accumulate_grad_hooks for p in model.parameters())
            # torch's own backward between followed steps, memgauge's wrapper for a followed one
            wrapped = torch.autograd.backward is not hooks._backward
            hooked_between.append((len(hooks.module_handles), len(hooks.grad_handles), unhooked, wrapped))
    memory = torch_memory(tracker.record(), time.monotonic())
    indices = [s.index for s in memory.steps]
    assert set(range(FIRST)) | {20, 40} <= set(indices)
    assert memory.steps_total == 45 and memory.steps_untracked == 45 - len(indices)
    assert memory.steps_untracked >= 30  # a steady loop: no rise brings the followed steps back
    # ...and back on for step 20, each parameter's gradient hook once
    assert hooked_between == [(0, 0, True, False), (2, 4, False, True)]
    # a followed step after untracked ones still sees every role
    later = next(s for s in memory.steps if s.index == 20)
    assert later.peak_by_role["parameters"] == later.peak_by_role["gradients"] > 0
    assert later.peak_by_role["activations"] > 0 and later.peak_by_role["optimizer_state"] > 0


def test_torch_s_backward_is_put_back_however_the_last_step_was_followed() -> None:
    original = torch.autograd.backward
    for steps in (1, 12):  # the wrapper on (a first step) and off (step 12 not followed)
        with connected() as tracker:
            model = _model(8)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for _ in range(steps):
                opt.zero_grad()
                model(torch.randn(2, 8)).sum().backward()
                opt.step()
            assert (torch.autograd.backward is original) == (not tracker.tracking)
        assert torch.autograd.backward is original


def _leaking_loop(steps: int) -> tuple[float, list[torch.Tensor]]:
    model = _model(512)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x = torch.randn(256, 512)
    kept = []
    t0 = time.monotonic()
    for _ in range(steps):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward(retain_graph=True)
        kept.append(loss)  # the graph and what it saved (about 1.5 MiB a step) outlive the step
        opt.step()
    return t0, kept


def test_a_leak_is_followed_and_its_rate_is_that_of_every_step_followed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with connected() as tracker:
        t0, kept = _leaking_loop(60)
        sampled = torch_memory(tracker.record(), t0)
        leak = torch_step_leak(sampled)
    del kept
    monkeypatch.setenv(ENV_TORCH_STEPS, "all")
    with connected() as every:
        t0, _kept = _leaking_loop(60)  # kept alive until the record is read
        truth = torch_step_leak(torch_memory(every.record(), t0))
    assert truth is not None and leak is not None
    assert truth.bytes_per_step >= 256 * 512 * 4  # at least one saved (256, 512) input a step
    assert leak.bytes_per_step == pytest.approx(truth.bytes_per_step, rel=0.05)
    assert leak.line == truth.line
    # the rising level kept it followed: from the first read that saw it rise (the level is read
    # every MEMORY_STEPS steps, and the process's resident size rises in lumps) to the end
    indices = [s.index for s in sampled.steps]
    held_from = indices[FIRST]
    assert indices == [*range(FIRST), *range(held_from, 60)]
    assert held_from <= FIRST + 4 * MEMORY_STEPS


def test_a_record_that_takes_long_to_write_is_written_less_often() -> None:
    pace = WritePace(every=1.0, share=0.005)
    assert pace.due(1.0) and not pace.due(0.5)
    pace.wrote(1.0, 1.001)  # 1 ms: every second still
    assert not pace.due(1.9) and pace.due(2.01)
    pace.wrote(3.0, 3.024)  # 24 ms (20,000 training rows): every 4.8 s, 0.5% of the time
    assert not pace.due(3.024 + 4.7) and pace.due(3.024 + 4.81)
