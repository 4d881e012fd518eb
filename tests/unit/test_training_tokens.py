"""Tokens per second as a steady figure: its per-step spread, the figures every report shows, and
the TensorBoard scalars (the tags and values, without the package)."""

from __future__ import annotations

import pytest

from memgauge.cli._tensorboard import scalars
from memgauge.sections.training import TrainingStep, summarize_training, training_figures
from tests.factories import make_profile


def test_tokens_spread_figures_and_scalars() -> None:
    # a slow first step (warm-up), then 0.5 s steps of 1000, 2000, 3000, 4000 tokens
    rows = [TrainingStep(0, 2.0, 2.0, tokens=10, kind="explicit")]
    rows += [TrainingStep(i, 2.0 + 0.5 * i, 0.5, tokens=1000 * i, kind="explicit") for i in range(1, 5)]
    t = summarize_training(rows, fetches=0)
    assert t.warmup_steps == 1
    assert t.tokens_per_second == pytest.approx(10000 / 2.0)
    assert t.tokens_per_step is not None and t.tokens_per_step.median == pytest.approx(2500)
    spread = t.tokens_per_second_per_step
    assert spread is not None and (spread.p10, spread.p90) == (pytest.approx(2600), pytest.approx(7400))
    names = {f.name: f for f in training_figures(t)}
    assert names["tokens/s"].spread == spread and names["tokens per step"].value == pytest.approx(2500)
    tags = {(tag, step): value for tag, step, value in scalars(make_profile(training=t))}
    assert tags[("memgauge/tokens_per_second", 2)] == pytest.approx(4000)
    assert tags[("memgauge/steady/tokens_per_second", 4)] == pytest.approx(5000)
    plain = summarize_training([TrainingStep(i, i + 1.0, 1.0, kind="explicit") for i in range(4)])
    assert plain.tokens_per_step is None and "tokens/s" not in {f.name for f in training_figures(plain)}
    assert not [tag for tag, _, _ in scalars(make_profile(training=plain)) if "tokens" in tag]
