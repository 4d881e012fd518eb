"""Tokens per second from a real ``memgauge run --tensorboard`` of a loop without torch that counts
its own tokens (a different count each step, ``memgauge.step(tokens=n)``) and times its own steps:
the steady figure within 5% of the loop's own, its per-step spread, the TensorBoard scalars, and a
``tokens_per_s>=`` budget judged on it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memgauge.gate import judge, parse_budget
from memgauge.model import Profile
from tests.conftest import run_memgauge

LOOP = """
import json, sys, time
import memgauge

own = []
start = time.monotonic()
for i in range(16):
    tokens = 200 + (i * 37) % 300  # what a token is, the program says: 200 to 499 a step
    busy = time.monotonic() + tokens * 2e-5  # computing: 4 to 10 ms
    while time.monotonic() < busy:
        pass
    memgauge.step(tokens=tokens)
    end = time.monotonic()
    own.append([end - start, tokens])
    start = end
json.dump(own, open(sys.argv[1], "w"))
"""


def test_tokens_per_second_is_the_loops_own_with_its_spread_scalars_and_budget(tmp_path: Path) -> None:
    (tmp_path / "loop.py").write_text(LOOP)
    board = tmp_path / "board"
    pytest.importorskip("tensorboard")
    r = run_memgauge(
        ["-q", "--no-lines", "--tensorboard", str(board), "loop.py", str(tmp_path / "own.json")], tmp_path
    )
    assert r.returncode == 0, r.stderr
    assert r.profile is not None and "training" in r.profile, r.stderr
    training = r.profile["training"]
    own = json.loads((tmp_path / "own.json").read_text())
    keep = [row["index"] for row in training["rows"] if not row["warmup"] and not row["flops_counted"]]
    assert len(keep) >= 8 and [row["tokens"] for row in training["rows"]] == [n for _, n in own]
    own_rate = sum(own[i][1] for i in keep) / sum(own[i][0] for i in keep)
    assert training["tokens_per_second"] == pytest.approx(own_rate, rel=0.05)
    rates = sorted(own[i][1] / own[i][0] for i in keep)
    spread = training["tokens_per_second_per_step"]
    assert rates[0] * 0.95 <= spread["p10"] <= spread["median"] <= spread["p90"] <= rates[-1] * 1.05
    per_step = training["tokens_per_step"]
    assert 200 <= per_step["p10"] <= per_step["median"] <= per_step["p90"] <= 499
    profile = Profile.from_dict(r.profile)
    assert profile.to_dict()["training"] == training
    # a budget on it: a lower bound under the figure passes, above it fails
    low, high = training["tokens_per_second"] * 0.5, training["tokens_per_second"] * 2
    assert [x.status for x in judge(profile, parse_budget(f"tokens_per_s>={low:.0f}")).results] == ["pass"]
    assert [x.status for x in judge(profile, parse_budget(f"tokens_per_s>={high:.0f}")).results] == ["fail"]
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(board))
    events.Reload()
    (steady,) = events.Scalars("memgauge/steady/tokens_per_second")
    assert steady.value == pytest.approx(training["tokens_per_second"], rel=1e-6)
    per = {e.step: e.value for e in events.Scalars("memgauge/tokens_per_second")}
    timed = [row for row in training["rows"] if row["seconds"]]
    assert per == {row["index"]: pytest.approx(row["tokens"] / row["seconds"], rel=1e-5) for row in timed}
