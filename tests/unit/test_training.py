"""Training throughput, in-process: the capture's loop on a clock the test drives, the wire record
read back, the analysis (warm-up, rates, what-if, bound, MFU against the table), the model's round
trip, and the FLOPs of one real torch step counted by the capture's torch part."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import pytest

from memgauge.capture import STEADY_AFTER
from memgauge.model import Profile
from memgauge.sections.training import (
    TrainingCounter,
    TrainingStep,
    known_peak,
    read_training,
    summarize_training,
    warmup_steps,
)
from memgauge.sections.training._capture import Loop, batch_samples
from tests.factories import make_profile


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Shaped:
    def __init__(self, *shape: int) -> None:
        self.shape = shape


def test_batch_samples_is_the_leading_dimension_of_the_first_shaped_part() -> None:
    assert batch_samples(Shaped(32, 3)) == 32
    assert batch_samples((Shaped(16, 8), Shaped(16))) == 16
    assert batch_samples(["text", Shaped(4, 2)]) == 4
    assert batch_samples({"ids": Shaped(7, 128), "mask": Shaped(7, 128)}) == 7
    assert batch_samples(Shaped()) is None  # a scalar has no batch dimension
    assert batch_samples(["a", "b"]) is None


def loop_steps(clock: Clock, loop: Loop, plan: list[tuple[float, float]]) -> None:
    """Each step waits ``wait`` seconds for a batch of 8, then computes ``compute`` seconds."""
    for wait, compute in plan:
        start = clock.now
        clock.now += wait
        loop.fetched(start, clock.now, 8)
        clock.now += compute
        loop.end_step("explicit")


def test_loop_rows_split_each_step_into_wait_and_the_rest(tmp_path: Path) -> None:
    clock = Clock()
    written: list[dict[str, object]] = []
    loop = Loop(clock=clock, write=written.append)
    loop_steps(clock, loop, [(0.5, 1.0), (0.25, 0.25)])
    loop.set_samples(3)  # the user's count beats the loader's
    loop.set_tokens(96)
    clock.now += 0.1
    loop.end_step("explicit")
    loop.count("env")
    clock.now += 2
    loop.count("env")
    loop.count("env")
    loop.set_samples(4, last=True)  # right after the step ended: that step's count
    # unrounded in the record (the reader rounds to the microsecond)
    assert [r[1:] for r in loop.rows] == [
        [1.5, 0.5, 8, "explicit", None],  # the first step starts at its first fetch
        [0.5, 0.25, 8, "explicit", None],
        [pytest.approx(0.1, abs=1e-9), 0.0, 4, "explicit", 96],
    ]
    loop.flush()
    assert written and written[-1]["counters"] == {"env": [3, 102.1, 104.1]}
    (tmp_path / "training.4242.json").write_text(json.dumps({"v": 2, **written[-1]}))
    record = read_training(tmp_path, t0=100.0)
    assert record is not None and record.fetches == 2
    assert [(s.index, s.end_seconds, s.seconds, s.samples) for s in record.steps] == [
        (0, 1.5, 1.5, 8),
        (1, 2.0, 0.5, 8),
        (2, 2.1, 0.1, 4),
    ]
    assert [s.tokens for s in record.steps] == [None, None, 96]
    assert record.counters == [TrainingCounter("env", 3, 1.0)]  # 2 intervals in 2 seconds


def test_a_record_that_breaks_the_layout_is_a_warning_not_figures(tmp_path: Path) -> None:
    from memgauge.model import CaptureWarning

    (tmp_path / "training.7.json").write_text(
        json.dumps({"v": 2, "pid": 7, "t": 1, "steps": [[1, 2]], "counters": {}})
    )
    warnings: list[CaptureWarning] = []
    assert read_training(tmp_path, 0.0, warnings=warnings) is None
    assert len(warnings) == 1 and "step row" in warnings[0].message


def rows(seconds: list[float | None], wait: float = 0.0, samples: int | None = 8) -> list[TrainingStep]:
    out, end = [], 0.0
    for i, s in enumerate(seconds):
        end += s or 0.0
        out.append(
            TrainingStep(i, end, s, wait_seconds=min(wait, s or 0.0), samples=samples, kind="optimizer")
        )
    return out


def test_warmup_is_the_slow_leading_steps_and_at_least_the_first() -> None:
    assert warmup_steps([5.0, 3.0, 1.0, 1.1, 0.9, 1.0, 1.0, 1.0]) == 2
    assert warmup_steps([1.0, 1.0, 1.0, 1.0]) == 1
    assert warmup_steps([None, 1.0]) == 1
    assert warmup_steps([1.0, 1.0]) == 0
    # a slow step later on is not warm-up, and warm-up never takes more than half
    assert warmup_steps([1.0, 1.0, 1.0, 9.0]) == 1
    assert warmup_steps([9.0] * 6 + [1.0] * 2) == 4


def test_rates_shares_and_what_if_over_the_steady_steps() -> None:
    steps = rows([4.0] + [0.5] * 10, wait=0.2)
    steps[5].flops_counted = True
    steps[5].seconds = 3.0  # slowed by counting: left out of the rates
    t = summarize_training(
        steps, fetches=11, flops=10**9, device="cpu", measured_peak=4e10, measured_peak_source="m"
    )
    assert (t.steps, t.warmup_steps, t.steady_steps) == (11, 1, 9)
    assert t.steps_per_second == pytest.approx(2.0)
    assert t.samples_per_second == pytest.approx(16.0)
    assert t.data_wait_share == pytest.approx(0.4)
    assert t.steps_per_second_without_data_wait == pytest.approx(9 / (4.5 - 1.8))
    assert t.steps_per_second_if_compute_free == pytest.approx(9 / 1.8)
    assert t.step_seconds is not None and t.step_seconds.median == pytest.approx(0.5)
    assert t.achieved_flops_per_second == pytest.approx(2e9)
    assert t.mfu == pytest.approx(0.05) and t.peak_source == "m"
    assert (
        t.bound == "compute" and "Compute takes 60%" in t.verdict and "5% of the device's peak" in t.verdict
    )
    assert t.rows[0].warmup and not t.rows[1].warmup


def test_data_bound_and_unknown_bound() -> None:
    t = summarize_training(rows([1.0] * 6, wait=0.75), fetches=6)
    assert t.bound == "data" and t.data_wait_share == pytest.approx(0.75)
    assert "4.0x faster" in t.verdict
    unknown = summarize_training(rows([1.0] * 6), fetches=0)
    assert unknown.bound == "unknown" and unknown.data_wait_share is None and unknown.mfu is None
    assert summarize_training(rows([None]), fetches=1).steps_per_second is None  # its start unseen


def test_gpu_mfu_uses_the_datasheet_dense_peak_of_the_dtype() -> None:
    # a fake of what the capture reports for a CUDA step: device "cuda" and torch's device name
    steps = rows([1.0] * 5)
    t = summarize_training(
        steps, flops=int(494.75e12), device="cuda", device_name="NVIDIA H100 80GB HBM3", dtype="bfloat16"
    )
    assert t.peak_flops_per_second == pytest.approx(989.5e12) and t.mfu == pytest.approx(0.5)
    assert "datasheet" in t.peak_source
    # a GPU not in the table has no MFU, and never gets the CPU's measured peak
    other = summarize_training(
        steps, flops=10**12, device="cuda", device_name="Mystery X1", dtype="bfloat16", measured_peak=1e9
    )
    assert other.mfu is None and other.achieved_flops_per_second == pytest.approx(1e12)


@pytest.mark.parametrize(
    ("name", "dtype", "tflops"),
    [
        ("NVIDIA H100 PCIe", "bfloat16", 756),
        ("NVIDIA H100 80GB HBM3", "float32", 67),
        ("NVIDIA A100-SXM4-80GB", "float16", 312),
        ("NVIDIA L4", "bfloat16", 121),
        ("NVIDIA L40S", "bfloat16", 362.05),
        ("NVIDIA A10", "float32", 31.2),
        ("Tesla V100-SXM2-16GB", "float16", 125),
    ],
)
def test_known_peaks(name: str, dtype: str, tflops: float) -> None:
    peak = known_peak(name, dtype)
    assert peak is not None and peak.flops_per_second == pytest.approx(tflops * 1e12)


def test_unknown_peaks() -> None:
    assert known_peak("NVIDIA A10G", "bfloat16") is None
    assert known_peak("Tesla T4", "bfloat16") is None  # T4 has no bf16
    assert known_peak("AMD EPYC", "float32") is None


def test_training_round_trips_through_the_profile() -> None:
    t = summarize_training(
        rows([2.0] + [1.0] * 5, wait=0.1), fetches=6, counters=[TrainingCounter("env", 9, 3.5)], flops=123
    )
    profile = make_profile(training=t)
    again = Profile.from_dict(json.loads(profile.to_json()))
    assert again.training == t and again == profile


def test_one_step_of_a_linear_stack_is_six_b_in_out_per_layer() -> None:
    torch = pytest.importorskip("torch")
    from memgauge.sections.training._capture_torch import TorchPart

    batch, widths = 16, [64, 128, 32]
    model = torch.nn.Sequential(*[torch.nn.Linear(i, o) for i, o in itertools.pairwise(widths)])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loop = Loop()
    loop.torch = TorchPart(loop, at=2)
    for _ in range(4):
        x = torch.randn(batch, widths[0], requires_grad=True)  # so the first layer counts 6 too
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
        loop.end_step("explicit")
    expected = sum(6 * batch * i * o for i, o in itertools.pairwise(widths))
    assert loop.flops is not None and loop.flops["step"] == 2
    assert loop.flops["total"] == pytest.approx(expected, rel=0.01)
    assert loop.flops["by"][0][:2] == ["cpu", "float32"]
    assert loop.torch.counter is None  # left at the counted step's end: later steps run plain


def test_the_counted_step_has_flop_counter_modes_total() -> None:
    # memgauge's own dispatch mode counts with the registry FlopCounterMode uses: on a step of
    # convolutions, matrix products (3-d, so bmm), attention and an optimizer, the same total
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    from memgauge.sections.training._capture_torch import StepFlops

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3)
            self.proj = torch.nn.Linear(8, 16)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = self.conv(x).flatten(2).transpose(1, 2)  # (batch, 36 positions, 8)
            q = self.proj(h)
            attended = torch.nn.functional.scaled_dot_product_attention(q, q, q)
            return (attended @ q.transpose(1, 2)).mean()

    torch.manual_seed(0)
    net = Net()
    opt = torch.optim.Adam(net.parameters())
    x = torch.randn(4, 3, 8, 8)

    def step() -> None:
        opt.zero_grad()
        net(x).backward()
        opt.step()

    step()
    torch_counter = FlopCounterMode(display=False)
    with torch_counter:
        step()
    ours = StepFlops()
    with ours:
        step()
    assert torch_counter.get_total_flops() > 0
    assert sum(ours.by.values()) == torch_counter.get_total_flops()
    assert list(ours.by) == [("cpu", "float32")]


def test_a_loop_past_its_first_steps_slows_the_line_sampler(tmp_path: Path) -> None:
    from memgauge.capture._sampler import INTERVAL
    from memgauge.capture._sampling import STEADY_FLUSH, STEADY_INTERVAL, start_sampler

    sampler = start_sampler(str(tmp_path))
    assert sampler is not None and sampler.interval == INTERVAL < STEADY_INTERVAL

    def samples(seconds: float) -> int:
        """The samples taken in ``seconds`` (each sets last_t; counted so, not by lines, whatever
        other threads the test session runs)."""
        seen = {sampler.last_t}
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            seen.add(sampler.last_t)
            time.sleep(0.002)
        return len(seen) - 1

    try:
        assert samples(0.2) >= 5  # the thread runs, at its first interval (about 20)
        loop = Loop()
        for _ in range(STEADY_AFTER - 1):
            loop.end_step("explicit")
        assert sampler.interval == INTERVAL  # the first steps: warm-up, sampled as closely as ever
        assert sampler.flush_every < STEADY_FLUSH
        loop.end_step("explicit")
        assert sampler.interval == STEADY_INTERVAL
        # and its aggregate written less often (a flush recomputes its pace from flush_min)
        assert sampler.flush_min == STEADY_FLUSH <= sampler.flush_every
        sampler.flush()
        assert sampler.flush_every >= STEADY_FLUSH
        assert 1 <= samples(0.4) <= 0.4 / STEADY_INTERVAL + 2  # about 4, not 40
    finally:
        sampler.stop()


def test_tokens_per_second_over_the_steps_that_counted_tokens() -> None:
    steps = rows([2.0] + [0.5] * 4)
    for r in steps[1:3]:
        r.tokens = 1000
    t = summarize_training(steps, fetches=5)
    assert t.tokens_per_second == pytest.approx(2000.0)  # 2 x 1000 tokens in 2 x 0.5 s
    assert summarize_training(rows([1.0] * 4), fetches=4).tokens_per_second is None


def test_a_jax_or_tensorflow_loop_gets_one_line_saying_it_is_not_followed() -> None:
    from memgauge.model._profile import ImportRecord
    from memgauge.render import TerminalRenderer
    from memgauge.sections.training import unfollowed_frameworks
    from tests.factories import make_profile

    def imports(*names: str) -> list[ImportRecord]:
        return [ImportRecord(10, n, 0.1, 0.2, 1 << 20, 0.1, 1 << 20) for n in names]

    keras_jax = make_profile(imports=imports("numpy", "keras", "jax"))
    line = unfollowed_frameworks(keras_jax)
    assert line.startswith("Keras on jax: not followed")
    assert line in " ".join(TerminalRenderer(width=200).render(keras_jax).split())
    assert unfollowed_frameworks(make_profile(imports=imports("tensorflow"))).startswith("tensorflow: not")
    assert unfollowed_frameworks(make_profile(imports=imports("numpy", "torch"))) == ""
    followed = make_profile(imports=imports("jax"), training=summarize_training([]))
    assert unfollowed_frameworks(followed) == ""


def test_a_loader_reading_one_ahead_counts_each_step_its_own_batch() -> None:
    loop = Loop()
    loop.epoch(0.0, 0.0)
    loop.fetched(0.0, 0.1, 8, ahead=True)  # the batch handed over now
    loop.fetched(0.1, 0.2, 8, ahead=True)  # the next one, read ahead
    loop.end_step("optimizer")
    loop.fetched(0.3, 0.4, 5, ahead=True)  # the last batch (5) read ahead
    loop.end_step("optimizer")
    loop.exhausted(0.5, 0.6)  # the epoch's end: the held batch is handed over
    loop.end_step("optimizer")
    assert [row[3] for row in loop.rows] == [8, 8, 5]


def test_batches_read_before_the_first_epoch_are_a_peek_not_the_first_step() -> None:
    loop = Loop()
    loop.epoch(0.0, 0.0)
    loop.fetched(0.0, 0.1, 8)  # Keras's fit reads one batch to build
    loop.epoch(0.2, 0.3)
    loop.fetched(0.3, 0.4, 8)
    loop.end_step("optimizer")
    loop.epoch(0.5, 0.6)  # a later epoch changes nothing already counted
    loop.fetched(0.6, 0.7, 8)
    loop.end_step("optimizer")
    assert [row[3] for row in loop.rows] == [8, 8]
