"""The search of ``memgauge fit`` stops at a precision that matters (a relative tolerance), starts
from the program's own value, and a Ctrl-C leaves the best value proven so far. The programs'
needs are known by construction; the answer is checked against the true boundary."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from memgauge.model import FitTrial
from memgauge.sweep import FitPlan, first_value, program_value, search

MIB = float(1 << 20)


def program(need: Callable[[int], float], limit: float, calls: list[int]) -> Callable[[int, bool], FitTrial]:
    def measure(value: int, guided: bool) -> FitTrial:
        calls.append(value)
        figure = need(value)
        fits = figure <= limit
        return FitTrial(value, {"rss": figure}, fits, 0, None, 0.0, () if fits else ("rss",), guided)

    return measure


def noisy(need: Callable[[int], float], spread: float, seed: int) -> Callable[[int], float]:
    """``need`` with run-to-run noise of up to ``spread`` (a fraction), the same for a value run
    twice, as a real peak's noise is not: seeded, so the test is repeatable."""
    rng = random.Random(seed)
    noise: dict[int, float] = {}

    def measured(value: int) -> float:
        if value not in noise:
            noise[value] = 1 + rng.uniform(-spread, spread)
        return need(value) * noise[value]

    return measured


def check_within(
    need: Callable[[int], float], limit: float, calls: list[int], value: int | None, tolerance: float
) -> None:
    """The answer fits, and a value that did not fit was measured at most ``tolerance`` above it."""
    assert value is not None and need(value) <= limit
    over = [c for c in calls if c > value and need(c) > limit]
    assert over and min(over) <= max(value + 1, value * (1 + tolerance)), (value, calls)


def linear(value: int) -> float:
    return 40 * MIB + 0.5 * MIB * value  # 512 KiB per batch item, as tests/programs/fit_batch.py


@pytest.mark.parametrize("start", [None, 8, 4000])
def test_a_linear_need_found_within_the_tolerance_in_few_runs(start: int | None) -> None:
    calls: list[int] = []
    limit = 600 * MIB
    result = search(program(linear, limit, calls), {"rss": limit}, start=start, tolerance=0.03)
    check_within(linear, limit, calls, result.value, 0.03)
    assert result.reason in ("tolerance", "boundary")
    # 8 search runs leave 2 for the verification: the "within 10 fresh runs"
    assert len(calls) <= 8, calls
    assert len(set(calls)) == len(calls)


@pytest.mark.parametrize("seed", range(8))
def test_noise_does_not_walk_the_search_one_value_at_a_time(seed: int) -> None:
    # the random forest: values 1 apart among 100,000 (113776, 113775, 113774, ...)
    need = noisy(lambda v: 60 * MIB + 0.0017 * MIB * v, 0.01, seed)
    limit = 250 * MIB * 0.9
    calls: list[int] = []
    result = search(program(need, limit, calls), {"rss": limit}, tolerance=0.03, start=10_000)
    check_within(need, limit, calls, result.value, 0.03)
    assert len(calls) <= 10, calls
    steps = sorted(calls)
    assert all(b - a > 1 for a, b in itertools.pairwise(steps)), steps


def test_no_tolerance_is_the_exact_boundary() -> None:
    calls: list[int] = []
    limit = 600 * MIB
    result = search(program(linear, limit, calls), {"rss": limit}, tolerance=0.0)
    assert result.value == 1120 and result.reason == "boundary"
    assert 1121 in calls


def test_ctrl_c_keeps_the_largest_value_proven_so_far() -> None:
    limit = 600 * MIB
    calls: list[int] = []
    measure = program(linear, limit, calls)

    def interrupted_on_the_fourth(value: int, guided: bool) -> FitTrial:
        if len(calls) == 3:
            raise KeyboardInterrupt
        return measure(value, guided)

    result = search(interrupted_on_the_fourth, {"rss": limit}, tolerance=0.03)
    assert result.reason == "interrupted" and len(result.trials) == 3
    fitted = [t.value for t in result.trials if t.fits]
    assert fitted and result.value == max(fitted)
    # interrupted before anything fitted: no value, still the trials
    nothing = search(lambda v, g: (_ for _ in ()).throw(KeyboardInterrupt), {"rss": limit})
    assert nothing.value is None and nothing.reason == "interrupted" and nothing.trials == []


def test_the_programs_own_value_is_the_first_tried(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("import os\nBATCH_SIZE = 3\nBATCH_SIZE: int = 64\nLR = 0.1\nNAME = 'x'\n")
    assert program_value([str(script)], "BATCH_SIZE", {}) == 64  # the last assignment runs
    assert program_value([str(script)], "LR", {}) is None  # not an integer
    assert program_value([str(script)], "NAME", {}) is None
    assert program_value([str(script)], "ROWS", {"ROWS": "2000"}) == 2000
    assert program_value(["-m", "tool"], "ROWS", {"ROWS": "many"}) is None
    plan = FitPlan(target=[str(script)], parameter="BATCH_SIZE", limits={"rss": MIB})
    assert first_value(plan) == (64, "the program's own value")
    plan.high = 32  # outside the range searched: not taken
    assert first_value(plan) == (1, "--min")
    plan.start = 5
    assert first_value(plan) == (5, "--start")


def test_the_reports_say_how_the_search_ended() -> None:
    from memgauge.model import FitRecord
    from memgauge.render import HtmlFitRenderer, MarkdownFitRenderer, TerminalFitRenderer

    trials = [FitTrial(100, {"rss": 90 * MIB}, True), FitTrial(103, {"rss": 101 * MIB}, False, over=("rss",))]
    record = FitRecord(
        parameter="N",
        value=100,
        runs=2,
        verified=False,
        command=["p.py"],
        budget={"rss": 100 * MIB},
        aims={"rss": 100 * MIB},
        margin=0.0,
        low=1,
        high=None,
        reason="tolerance",
        trials=trials,
        tolerance=0.03,
        start=100,
        start_from="the program's own value",
    )
    # the same words in every format: one report document
    for text in (
        TerminalFitRenderer().render(record),
        MarkdownFitRenderer().render(record),
        HtmlFitRenderer().render(record),
    ):
        assert "N = 100  (N=103 does not: within 3%)" in text
        assert "started at 100 (the program&#x27;s own value)" in text or "(the program's own value)" in text
    record.reason = "interrupted"
    for text in (TerminalFitRenderer().render(record), HtmlFitRenderer().render(record)):
        assert "interrupted: the largest value proven to fit so far" in text
        assert "not verified (interrupted)" in text
    assert FitRecord.from_dict(record.to_dict()) == record
