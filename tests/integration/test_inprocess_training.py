"""``memgauge.profile()`` blocks get a ``training`` part (issue 20): the steps the block ran,
assembled as ``memgauge run`` assembles a program's, from a tiny CPU torch loop (optimizer steps,
the FLOPs of one step) and from ``memgauge.step()``; nothing after the block, and no part for a
block that took no step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import memgauge

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the CPU's measured matmul peak is cached under XDG_CACHE_HOME: not the user's here
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("MEMGAUGE_TORCH", raising=False)
    monkeypatch.delenv("MEMGAUGE_FLOP_STEP", raising=False)


def test_a_torch_loop_in_a_block_gets_its_training_part() -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(64, 8)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(32, 64), torch.randn(32, 8)
    with memgauge.profile() as p:
        for _ in range(8):
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
    assert p.profile is not None
    training = p.profile.training
    assert training is not None
    assert training.steps == 8 and training.steps_per_second is not None and training.steps_per_second > 0
    # one step counted (FlopCounterMode, shapes): forward 2*B*in*out, the weight's gradient as much
    # (the input needs none)
    assert training.flops_per_step == 2 * 2 * 32 * 64 * 8, training.flops_per_step
    # judged against this CPU's own measured matmul peak, in the step's dtype
    assert training.dtype == "float32" and training.peak_source.startswith("measured"), training
    assert training.mfu is not None and 0 < training.mfu < 1, training.mfu
    assert [(r.pid, r.role) for r in training.processes] == [(os.getpid(), "main loop")]
    # the part survives the profile's round trip
    again = memgauge.Profile.from_dict(p.profile.to_dict())
    assert again.training is not None and again.training.steps == 8
    # after the block, optimizer steps are not counted anywhere: the next block starts at zero
    with memgauge.profile() as q:
        for _ in range(3):
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
    assert q.profile is not None and q.profile.training is not None
    assert q.profile.training.steps == 3


def test_explicit_steps_in_a_block_and_none_without() -> None:
    memgauge.step()  # outside any block: a no-op
    with memgauge.profile() as p:
        for _ in range(5):
            memgauge.step(samples=4)
    assert p.profile is not None and p.profile.training is not None
    training = p.profile.training
    assert training.steps == 5 and training.samples_per_step is not None
    assert training.samples_per_step.median == 4 and training.samples_per_second is not None
    with memgauge.profile() as q:
        sum(range(1000))
    assert q.profile is not None and q.profile.training is None


def test_a_block_that_raises_takes_its_loop_down() -> None:
    with pytest.raises(ZeroDivisionError), memgauge.profile():
        memgauge.step()
        _ = 1 / 0
    with memgauge.profile() as p:
        pass
    assert p.profile is not None and p.profile.training is None


def test_a_block_inside_a_measured_run_holds_its_own_steps(tmp_path: Path) -> None:
    """Under ``memgauge run`` the process has a loop of its own: the block's part holds the steps
    taken inside it, the run's every step."""
    script = tmp_path / "prog.py"
    script.write_text(
        "import memgauge\n"
        "for _ in range(3): memgauge.step()\n"
        "with memgauge.profile() as p:\n"
        "    for _ in range(4): memgauge.step()\n"
        "for _ in range(2): memgauge.step()\n"
        "print('block', p.profile.training.steps)\n"
    )
    out = tmp_path / "run.json"
    r = subprocess.run(
        [sys.executable, "-m", "memgauge", "run", "-q", "--no-lines", "--json", str(out), str(script)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "block 4" in r.stdout, r.stdout
    assert json.loads(out.read_text())["training"]["steps"] == 9
