"""Remedies hooked on a real CPU model in this process (with the torch tracker connected, as in a
measured run), the what-if table's analysis on records whose figures are known by construction,
the prediction's arithmetic (the renderers' tests, which need no torch: test_fit_plan_reports.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("torch")
import torch

from memgauge.analysis import (
    OVERHEADS_TOTAL,
    PredictedStep,
    RemedyMeasure,
    gpu_prediction,
    largest_under,
    remedy_table,
)
from memgauge.render import TerminalPredictionRenderer
from memgauge.sections.torch._capture_remedies import Remedies
from memgauge.sections.torch._capture_track import Tracker
from tests.factories import MIB, make_profile, torch_run
from tests.torch_tracking import connected

W, B, DEPTH = 64, 256, 4


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(W, 4 * W)
        self.b = torch.nn.Linear(4 * W, W)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.b(torch.relu(self.a(x)))


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block() for _ in range(DEPTH)])
        self.head = torch.nn.Linear(W, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.head(x)


@pytest.fixture
def tracker() -> Iterator[Tracker]:
    with connected() as t:
        yield t


def _net() -> Net:
    torch.manual_seed(0)
    return Net()


def _step(model: torch.nn.Module, loss_first: bool = False) -> list[torch.Tensor]:
    torch.manual_seed(1)
    x, y = torch.randn(B, W), torch.randint(0, 10, (B,))
    loss_fn = torch.nn.CrossEntropyLoss()
    if loss_first:
        loss_fn(torch.randn(2, 10), torch.tensor([0, 1]))  # a module with no children, called first
    loss_fn(model(x).float(), y).backward()
    return [p.grad.clone() for p in model.parameters() if p.grad is not None]


def _hooked(names: tuple[str, ...], tmp_path: Path) -> Iterator[Remedies]:
    remedies = Remedies(names, str(tmp_path / "hooked.json"))
    remedies.install()
    try:
        yield remedies
    finally:
        remedies.uninstall()


def test_checkpoint_wraps_each_block_keeps_the_gradients_and_saves_fewer_activations(
    tracker: Tracker, tmp_path: Path
) -> None:
    plain = _step(_net())
    saved_plain = tracker.max_roles[3]  # activations
    tracker.max_roles[3] = 0
    for remedies in _hooked(("checkpoint",), tmp_path):
        grads = _step(_net())  # the tracker stays connected: recomputation in backward must work
        report = json.loads((tmp_path / "hooked.json").read_text())
        assert remedies.report == report
    assert [len(g) for g in grads] == [len(g) for g in plain]
    assert all(torch.equal(a, b) for a, b in zip(grads, plain, strict=True))  # recomputed, same math
    assert report["hooked"] == [f"checkpoint: Net.blocks.{i}" for i in range(DEPTH)] + [
        "checkpoint: Net.head"
    ]
    # plain: each block saves its input (for a) and relu's output (for relu and b): B x W + B x 4W floats
    assert saved_plain >= DEPTH * (B * W + B * 4 * W) * 4
    assert tracker.max_roles[3] < saved_plain / 4  # the blocks' insides are recomputed, not saved


def test_autocast_runs_the_model_in_bf16_on_the_cpu_and_nothing_after_it(tmp_path: Path) -> None:
    dtypes: dict[str, torch.dtype] = {}
    model = _net()

    def seen(module: torch.nn.Module, args: object, out: torch.Tensor) -> None:
        dtypes["head"] = out.dtype

    model.head.register_forward_hook(seen)
    for remedies in _hooked(("autocast",), tmp_path):
        out = model(torch.randn(B, W))
        after = torch.nn.Linear(W, W)(torch.randn(B, W))  # outside the model: no autocast
        report = remedies.report
    assert dtypes["head"] == torch.bfloat16 and out.dtype == torch.bfloat16
    assert after.dtype == torch.float32
    assert report["hooked"] == ["autocast: Net.forward (cpu, bfloat16)"]
    assert not torch.is_autocast_enabled("cpu")


def test_offload_is_not_applied_on_the_cpu_and_says_why(tmp_path: Path) -> None:
    for remedies in _hooked(("offload",), tmp_path):
        _step(_net(), loss_first=True)
        report = remedies.report
    assert report["model"] == "Net"  # the loss module, called first, has no children
    assert report["hooked"] == []
    assert "cannot lower the peak" in report["not_applied"][0]


def test_the_table_compares_each_remedy_with_the_baseline() -> None:
    def measure(name: str, peak: int, seconds: list[float], batch: int, k: int = 1) -> RemedyMeasure:
        rss = 200 * MIB + peak
        half = make_profile(rss=200 * MIB + peak // 2, torch=torch_run(peak // 2, seconds))
        profile = make_profile(rss=rss, torch=torch_run(peak, seconds))
        return RemedyMeasure(name, profile, batch=batch, steps_per_update=k, half=half, half_batch=batch // 2)

    table = remedy_table(
        [
            measure("baseline", 100 * MIB, [9.0, 1.0, 1.0, 1.0], 64),
            measure("checkpoint", 40 * MIB, [9.0, 1.5, 1.3, 1.4], 64),
            measure("accumulate", 25 * MIB, [9.0, 0.3, 0.3], 16, k=4),
            RemedyMeasure("offload", None, not_applied=["offload: the model is on the cpu"]),
        ],
        budget_bytes=400 * MIB,
    )
    base, ck, acc, off = table.rows
    assert base.step_seconds == 1.0  # the first step (9 s) is left out
    assert ck.tensor_delta == pytest.approx(-0.6) and ck.step_ratio == pytest.approx(1.4)
    assert acc.step_seconds == pytest.approx(1.2) and acc.effective_batch == 64
    assert any("effective batch 64" in note for note in acc.notes)
    assert ck.tensor_peak_bytes == 40 * MIB  # one step per update: the run's own peak
    assert acc.tensor_peak_bytes == 35 * MIB  # accumulating, the 10 MiB of gradients stay alive
    assert acc.peak_by_role["gradients"] == 10 * MIB
    assert (
        not off.applied
        and off.tensor_peak_bytes is None
        and off.notes == ["offload: the model is on the cpu"]
    )
    # rss = 200 MiB + per_sample x batch: baseline 100 MiB / 64 per sample -> (400 - 200) / (100/64) = 128
    assert base.largest_batch == 128
    assert ck.largest_batch == 320  # 40 MiB per 64: 200 MiB / 0.625 MiB
    assert acc.largest_batch == 128 * 4  # the micro-batch's law, times the accumulation steps


def test_largest_under_follows_the_line_and_refuses_a_falling_one() -> None:
    assert largest_under([(10, 110), (20, 120)], 150) == 50
    assert largest_under([(10, 110), (20, 120)], 100) is None  # below the line's start
    assert largest_under([(10, 120), (20, 110)], 150) is None  # not a rising line
    assert largest_under([(10, 110)], 150) is None


def test_the_gpu_prediction_adds_the_rounding_and_the_named_overheads() -> None:
    # at 64 the peak (64 MiB) is in forward; at 32 the optimizer step holds it (50 MiB): the peaks
    # are not a line, the sums of each role's maximum are (30 MiB fixed + 1 MiB per sample)
    roles_64 = {"parameters": 10 * MIB, "optimizer_state": 20 * MIB, "activations": 64 * MIB}
    roles_32 = {**roles_64, "activations": 32 * MIB}
    steps = [
        PredictedStep(64, 64 * MIB, max_by_role=roles_64, rounding_bytes=1024),
        PredictedStep(32, 50 * MIB, max_by_role=roles_32, rounding_bytes=1024),
    ]
    gpu = 2048 * MIB
    p = gpu_prediction(steps, gpu)
    assert p.allocated_bytes == 64 * MIB + 1024
    assert p.total_bytes == 64 * MIB + 1024 + OVERHEADS_TOTAL
    room = gpu - OVERHEADS_TOTAL - 30 * MIB - 1024
    assert p.largest_batch == room // MIB
    failed = gpu_prediction([PredictedStep(64, error="no prediction"), steps[1]], gpu)
    assert failed.total_bytes is None and failed.largest_batch is None
    text = TerminalPredictionRenderer().render(failed, "BATCH")
    assert "BATCH=64: no prediction" in text


def test_a_tabular_row_shows_the_resident_change_and_says_the_roles_do_not_apply() -> None:
    base = make_profile(rss=400 * MIB)
    table = remedy_table(
        [
            RemedyMeasure("baseline", base),
            RemedyMeasure(
                "dtypes",
                make_profile(rss=300 * MIB),
                hooked=["dtypes: read_csv(t.csv) x: float64 -> float32"],
            ),
            RemedyMeasure("checkpoint", None, not_applied=["checkpoint: the program does not use torch"]),
        ]
    )
    rows = {row.name: row for row in table.rows}
    assert rows["dtypes"].rss_delta == pytest.approx(-0.25) and rows["dtypes"].tensor_delta is None
    assert rows["dtypes"].notes == [
        "torch roles do not apply: dtypes changes frames, not tensors (see resident peak)"
    ]


def test_remedy_names_are_checked_before_anything_runs() -> None:
    from memgauge._errors import UsageError
    from memgauge.sweep import REMEDIES, parse_remedies

    assert parse_remedies("all") == list(REMEDIES) == parse_remedies("")
    assert parse_remedies("checkpoint, accumulate") == ["checkpoint", "accumulate"]
    with pytest.raises(UsageError, match="unknown remedy 'dtype'"):
        parse_remedies("checkpoint,dtype")
