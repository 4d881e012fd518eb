"""``memgauge compare`` of training runs: the speed-up of steady steps/s with its interval from the
steps' spread, known by construction, and the section in every format (absent without training)."""

from __future__ import annotations

import json

import pytest

from memgauge.analysis import compare
from memgauge.render import (
    HtmlComparisonRenderer,
    MarkdownComparisonRenderer,
    TerminalComparisonRenderer,
)
from memgauge.sections.training import Training, TrainingStep, summarize_training
from tests.factories import make_profile


def training(seconds: list[float]) -> Training:
    # a slow first step (warm-up), then the given steady steps, each waiting a tenth of its time
    times = [10 * seconds[0], *seconds]
    rows, end = [], 0.0
    for i, s in enumerate(times):
        end += s
        rows.append(TrainingStep(i, end, s, wait_seconds=s / 10, samples=8, kind="optimizer"))
    return summarize_training(rows, fetches=len(rows))


def test_speedup_is_the_ratio_of_mean_step_times_with_its_noise() -> None:
    before = training([0.5, 0.52, 0.48, 0.5] * 5)  # mean 0.5 s
    after = training([0.25, 0.26, 0.24, 0.25] * 5)  # mean 0.25 s
    c = compare([make_profile(training=before), make_profile(training=after)], ["before", "after"])
    assert c.section("training") is not None
    (s,) = c.section("training").speedups
    assert s is not None and s.ratio == pytest.approx(2.0)
    # sd/sqrt(n)/mean is the same on both sides: 0.01414/sqrt(20)/0.5 for "before"
    noise = 2**0.5 * (0.0145095 / 20**0.5 / 0.5)
    assert s.low == pytest.approx(2 * (1 - 1.96 * noise), rel=1e-3) and s.beyond_noise
    assert "2.00x the steps/s" in s.sentence("before") and "faster" in s.sentence("before")
    same = compare(
        [make_profile(training=before), make_profile(training=training([0.5, 0.49, 0.51, 0.5] * 5))],
        ["a", "b"],
    )
    assert same.section("training") is not None and same.section("training").speedups[0] is not None
    assert not same.section("training").speedups[0].beyond_noise
    rows = {r.label: r.values for r in c.section("training").rows}
    assert rows["steps/s"] == (pytest.approx(2.0), pytest.approx(4.0))
    assert rows["data wait share"] == (pytest.approx(0.1), pytest.approx(0.1))


def test_every_format_shows_the_training_comparison_and_only_when_there_is_one() -> None:
    a, b = (
        make_profile(training=training([0.5] * 4 + [0.52])),
        make_profile(training=training([0.25] * 4 + [0.26])),
    )
    c = compare([a, b], ["before", "after"])
    data = json.loads(json.dumps(c.to_dict()))
    assert data["training"]["speedups"][0]["ratio"] == pytest.approx(0.504 / 0.252, rel=1e-3)
    assert "after vs before: 2.00x the steps/s" in TerminalComparisonRenderer(width=140).render(c)
    md = MarkdownComparisonRenderer().render(c)
    assert "### Training throughput (steady steps)" in md and "| steps/s | 1.98 | 3.97 |" in md
    assert "training throughput" in HtmlComparisonRenderer().render(c)
    plain = compare([make_profile(), make_profile()], ["a", "b"])
    assert plain.section("training") is None and "training" not in plain.to_dict()
    assert "Training" not in MarkdownComparisonRenderer().render(plain)
    # one run without training: its figures are missing, and there is no speed-up
    half = compare([a, make_profile()], ["a", "b"])
    assert half.section("training") is not None and half.section("training").speedups == (None,)


def test_runs_without_a_step_have_no_training_comparison() -> None:
    # programs with no training loop: no "training throughput" table, no "too few steady steps"
    a, b = make_profile(), make_profile()
    a.training, b.training = Training(steps=0), Training(steps=0)
    c = compare([a, b], ["a", "b"])
    assert c.section("training") is None
    assert "training throughput" not in TerminalComparisonRenderer().render(c)
    assert "steady steps" not in TerminalComparisonRenderer().render(c)


def test_the_pair_is_summed_up_by_what_a_container_needs_where_every_run_has_it() -> None:
    a, b = make_profile(peaks={1: 100 << 20}), make_profile(peaks={1: 150 << 20})
    a.peak.needs_bytes, b.peak.needs_bytes = 110 << 20, 170 << 20
    text = TerminalComparisonRenderer().render(compare([a, b], ["a", "b"]))
    assert "b vs a: container needs +60.0 MiB (1.55x)" in text
    b.peak.needs_bytes = 0  # an older profile: the resident peak sums the pair up
    text = TerminalComparisonRenderer().render(compare([a, b], ["a", "b"]))
    assert "b vs a: resident peak +50.0 MiB (1.50x)" in text
