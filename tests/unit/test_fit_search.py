"""The search of ``memgauge fit`` (``sweep.search``) on programs whose need is known by
construction: the answer is the exact largest integer within the limit, found in few trials by
the growth law; memory that is not monotonic in the value is detected and reported; the record
round-trips."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from memgauge._errors import UsageError
from memgauge.cli.commands.fit import limits_of
from memgauge.model import FitRecord, FitTrial, FitVerification, NonMonotonic
from memgauge.sections.gpu import GpuDevice
from memgauge.sections.torch import TorchMemory, TorchStep
from memgauge.sweep import figures_of, non_monotonic, search
from tests.factories import make_profile

MIB = float(1 << 20)


def program(need: Callable[[int], float], limit: float, calls: list[int]) -> Callable[[int, bool], FitTrial]:
    def measure(value: int, guided: bool) -> FitTrial:
        calls.append(value)
        figure = need(value)
        return FitTrial(
            value, {"rss": figure}, figure <= limit, 0, None, 0.0, () if figure <= limit else ("rss",), guided
        )

    return measure


def true_answer(need: Callable[[int], float], limit: float, upto: int = 1 << 20) -> int:
    return max(v for v in range(1, upto) if need(v) <= limit) if need(1) <= limit else 0


@pytest.mark.parametrize(
    ("need", "limit"),
    [
        (lambda v: 300 * MIB + 2.5 * MIB * v, 2048 * MIB),  # linear: a batch of activations
        (lambda v: 50 * MIB + 0.01 * MIB * v * v, 1024 * MIB),  # quadratic: attention over a length
        (lambda v: 80 * MIB + 0.3 * MIB * v * math.log(v), 4096 * MIB),  # n log n
    ],
)
def test_the_exact_largest_value_in_few_trials(need: Callable[[int], float], limit: float) -> None:
    calls: list[int] = []
    result = search(program(need, limit, calls), {"rss": limit})
    answer = true_answer(need, limit, 20000)
    assert result.value == answer and result.reason == "boundary"
    # bisection over [1, 2^k] would take about 2·log2(answer) runs; the law needs far fewer
    assert len(calls) <= 12, calls
    assert len(calls) < 2 * math.log2(answer)
    assert len(set(calls)) == len(calls)  # no value run twice
    assert result.non_monotonic == []


def test_a_start_above_the_answer_searches_down() -> None:
    need = lambda v: 100 * MIB + MIB * v  # noqa: E731
    calls: list[int] = []
    result = search(program(need, 612 * MIB, calls), {"rss": 612 * MIB}, start=4000)
    assert result.value == 512
    assert calls[0] == 4000


def test_nothing_fits_and_the_maximum_fits() -> None:
    need = lambda v: 100 * MIB + MIB * v  # noqa: E731
    nothing = search(program(need, 50 * MIB, []), {"rss": 50 * MIB})
    assert nothing.value is None and nothing.reason == "nothing fits"
    calls: list[int] = []
    capped = search(program(need, 10_000 * MIB, calls), {"rss": 10_000 * MIB}, high=300)
    assert capped.value == 300 and capped.reason == "maximum fits"


def test_non_monotonic_memory_is_reported_not_smoothed() -> None:
    # the issue's CPU MLP: 989 MiB at 6144, 785 MiB at 8192, 991 MiB at 12288 (an allocator
    # threshold): between 6144 and 12288 the need drops, then climbs again
    def need(v: int) -> float:
        base = 200 * MIB + v * (789 * MIB / 6144)
        return base - 300 * MIB if 7000 <= v <= 9000 else base

    calls: list[int] = []
    limit = 1000 * MIB
    result = search(program(need, limit, calls), {"rss": limit}, start=6144)
    assert result.value is not None
    assert need(result.value) <= limit < need(result.value + 1)
    # whichever values it tried, a drop of the need as the value grew is named if it was seen
    measured = sorted(set(calls))
    drops = [(a, b) for i, a in enumerate(measured) for b in measured[i + 1 :] if need(b) < need(a) * 0.95]
    assert bool(drops) == any(n.metric == "rss" for n in result.non_monotonic)


def test_the_issues_points_are_reported_as_non_monotonic() -> None:
    # the issue's CPU MLP: 989 MiB at batch 6144, 785 MiB at 8192, 991 MiB at 12288: under a
    # 988 MiB limit, 8192 fits above the failing 6144, and its peak is lower
    def trial(value: int, mib: float, limit: float) -> FitTrial:
        return FitTrial(value, {"rss": mib * MIB}, mib * MIB <= limit)

    limit = 988 * MIB
    trials = [trial(6144, 989, limit), trial(8192, 785, limit), trial(12288, 991, limit)]
    found = non_monotonic(trials, {"rss": limit})
    assert NonMonotonic(8192, 6144, "fits", None, None) in found
    assert NonMonotonic(8192, 6144, "rss", 785 * MIB, 989 * MIB) in found
    assert all(n.value == 8192 for n in found)
    # a program whose need only grows has none
    growing = [trial(v, 100 + v / 100, limit) for v in (1000, 2000, 4000)]
    assert non_monotonic(growing, {"rss": limit}) == []


def test_failed_runs_do_not_fit_and_are_left_out_of_the_law() -> None:
    def measure(value: int, guided: bool) -> FitTrial:
        if value >= 300:  # the program itself crashes above 300 (not the budget)
            return FitTrial(value, {"rss": 10 * MIB}, False, 1, "exit 1", 0.0, (), guided)
        return FitTrial(value, {"rss": MIB * value}, True, 0, None, 0.0, (), guided)

    result = search(measure, {"rss": 10_000 * MIB})
    assert result.value == 299


def test_the_record_round_trips() -> None:
    record = FitRecord(
        parameter="BATCH_SIZE",
        value=12,
        runs=5,
        verified=True,
        command=["train.py"],
        budget={"rss": 100 * MIB},
        aims={"rss": 90 * MIB},
        margin=0.1,
        low=1,
        high=None,
        reason="boundary",
        trials=[FitTrial(12, {"rss": 80 * MIB}, True), FitTrial(13, {"rss": 95 * MIB}, False, over=("rss",))],
        laws={"rss": "linear: 1 + 2·N"},
        verification=FitVerification(12, int(100 * MIB), True, True, 0, 0, 0, 1.0, 90, 95, 2),
    )
    data = record.to_dict()
    assert (data["format"], data["version"]) == ("memgauge-fit", 2)
    assert data["parameter"] == "BATCH_SIZE" and data["value"] == 12
    assert data["runs"] == 5 and data["verified"] is True
    assert FitRecord.from_dict(data) == record


def test_the_figures_a_fit_holds_to_the_budget() -> None:
    profile = make_profile(rss=300 * int(MIB), wall=2.0)
    profile.torch = TorchMemory(
        mode="summary",
        pid=1,
        peak_bytes=0,
        steps=[TorchStep(i, float(i), seconds, 0) for i, seconds in enumerate((0.5, 0.1, 0.2, 0.3))],
    )
    profile.gpu = [
        GpuDevice(0, process_peak=None, reserved_peak=5 * int(MIB)),
        GpuDevice(1, process_peak=7 * int(MIB)),
    ]
    figures = figures_of(profile)
    assert figures["rss"] == 300 * MIB and figures["wall"] == 2.0
    assert figures["step"] == pytest.approx(0.25)  # the median step, not the first (warm-up) one
    assert figures["gpu"] == 7 * MIB
    assert "step" not in figures_of(make_profile(rss=1, wall=1.0))


def test_the_budget_of_a_fit() -> None:
    assert limits_of(["rss=2GiB,step=0.5s", "wall=1min"]) == {"rss": 2 * 1024**3, "step": 0.5, "wall": 60.0}
    with pytest.raises(UsageError):
        limits_of(["cpu=10s"])
    with pytest.raises(UsageError):
        limits_of(["fit.rss=1GiB"])
