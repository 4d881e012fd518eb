"""Budgets on the training figures: the lower-bound form (``samples_per_s>=400``), shares as
fractions or percentages, the one-line errors for bad input, and verdicts judged both ways on
profiles whose training figures are known by construction."""

from __future__ import annotations

import json

import pytest

from memgauge.gate import BudgetError, CheckResult, Limit, judge, parse_budget
from memgauge.render import TerminalVerdictRenderer
from memgauge.sections.training import Training
from tests.factories import make_profile


def test_lower_bounds_and_shares_parse() -> None:
    b = parse_budget("samples_per_s>=400 steps_per_s>=2.5/s mfu>=40% data_wait=0.25 rss=1GiB")
    assert [(x.metric, x.value, x.lower) for x in b.limits] == [
        ("samples_per_s", 400.0, True),
        ("steps_per_s", 2.5, True),
        ("mfu", 0.4, True),
        ("data_wait", 0.25, False),
        ("rss", float(1 << 30), False),
    ]
    assert [x.unit for x in b.limits][:4] == ["rate", "rate", "share", "share"]


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        (
            "rss>=1GiB",
            "rss takes an upper limit (rss=value): only steps_per_s, samples_per_s, tokens_per_s, mfu, "
            "data_wait take '>='",
        ),
        ("samples_per_s>=fast", "not a rate (e.g. 400 or 400/s)"),
        ("mfu>=140%", "a share is at most 1 (100%)"),
        ("mfu>=0", "a limit must be a finite figure above zero"),
        ("fit.samples_per_s>=4", "samples_per_s is a figure of the run's training loop, not of a phase"),
        ("samples_per_s>=", "empty value"),
    ],
)
def test_bad_throughput_limits_are_one_line_errors(spec: str, reason: str) -> None:
    with pytest.raises(BudgetError) as e:
        parse_budget(spec)
    assert e.value.message.splitlines()[0] == f"--budget: {reason} in '{spec}'"


def trained(samples_per_second: float | None, mfu: float | None = None) -> Training:
    return Training(
        steps=10, steps_per_second=2.0, samples_per_second=samples_per_second, mfu=mfu, bound="compute"
    )


def test_a_lower_bound_fails_below_and_passes_at_or_above() -> None:
    budget = parse_budget("samples_per_s>=400 mfu>=0.3")
    low = judge(make_profile(training=trained(399.0, 0.2)), budget)
    assert [r.status for r in low.results] == ["fail", "fail"]
    assert low.results[0].margin == pytest.approx(-1.0)
    high = judge(make_profile(training=trained(400.0, 0.5)), budget)
    assert [r.status for r in high.results] == ["pass", "pass"] and high.ok
    assert high.results[1].margin == pytest.approx(0.2)


def test_missing_training_figures_are_unmeasured_with_the_reason() -> None:
    budget = parse_budget("samples_per_s>=400 mfu>=0.3")
    none = judge(make_profile(), budget)
    assert [r.status for r in none.results] == ["unmeasured", "unmeasured"]
    assert "no training steps" in none.results[0].note
    partial = judge(make_profile(training=trained(500.0)), budget)
    assert [r.status for r in partial.results] == ["pass", "unmeasured"]
    assert "peak" in partial.results[1].note


def test_verdict_json_and_table_say_it_is_a_lower_bound() -> None:
    v = judge(make_profile(training=trained(399.0)), parse_budget("samples_per_s>=400 wall=1h"))
    data = json.loads(json.dumps(v.to_dict()))
    assert data["results"][0]["lower"] is True and "lower" not in data["results"][1]
    assert CheckResult.from_dict(data["results"][0]) == v.results[0]
    assert CheckResult.from_dict(data["results"][0]).limit == Limit(
        "samples_per_s", 400.0, None, "samples_per_s>=400", True
    )
    table = TerminalVerdictRenderer(width=140).render(v)
    assert "≥ 400/s" in table and "399/s" in table
