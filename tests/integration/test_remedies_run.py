"""The what-if table of remedies on a real CPU training loop, each remedy hooked without editing
the program, checked against separate plain runs of the same program with the remedy written in
its code (checkpointing, autocast, gradient accumulation): the tensor peaks agree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memgauge.analysis import RemedyRow
from memgauge.runner import RunOptions, Target, run_program
from memgauge.sweep import RemedyPlan, run_remedies

pytest.importorskip("torch")

BATCH, K = 1024, 4

# activations dominate by construction: per block B x (W + 4W) floats saved, against 2 x W x 4W
# parameters; SGD keeps no state, so the peak is in forward/backward, where remedies act
TRAIN = """
import os
import torch
from torch.utils.checkpoint import checkpoint

BATCH = 1024
HAND = os.environ.get("HAND", "")  # the remedy written in code, for the check against the hooks
K = 4
torch.manual_seed(0)


class Block(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.a = torch.nn.Linear(width, 4 * width)
        self.b = torch.nn.Linear(4 * width, width)

    def forward(self, x):
        return x + self.b(torch.relu(self.a(x)))


class Net(torch.nn.Module):
    def __init__(self, width=64, depth=6):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(width) for _ in range(depth)])
        self.head = torch.nn.Linear(width, 10)

    def forward(self, x):
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False) if HAND == "checkpoint" else block(x)
        return self.head(x)


def loss_of(x, y):
    if HAND == "autocast":
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = model(x)
    else:
        out = model(x)
    return torch.nn.functional.cross_entropy(out.float(), y)


model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(3):
    x = torch.randn(BATCH, 64)
    y = torch.randint(0, 10, (BATCH,))
    opt.zero_grad()
    if HAND == "accumulate":
        for xs, ys in zip(x.chunk(K), y.chunk(K)):
            (loss_of(xs, ys) / K).backward()
    else:
        loss_of(x, y).backward()
    opt.step()
"""


def _plain(script: Path, hand: str) -> int:
    env = {**os.environ, "HAND": hand}
    profile = run_program(
        Target("script", str(script)), RunOptions(lines="off", env=env, cwd=str(script.parent))
    )
    assert profile.exit.code == 0 and profile.torch is not None
    return profile.torch.peak_bytes


def test_the_table_agrees_with_the_remedies_written_by_hand(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    plan = RemedyPlan(
        Target("script", str(script)), parameter="BATCH", value=BATCH, accumulate=K, cwd=str(tmp_path)
    )
    table = run_remedies(plan)
    rows: dict[str, RemedyRow] = {row.name: row for row in table.rows}
    assert list(rows) == ["baseline", "checkpoint", "autocast", "offload", "accumulate", "dtypes"]
    assert rows["dtypes"].notes == ["dtypes: the program does not use pandas"]

    base = rows["baseline"]
    assert base.tensor_peak_bytes is not None and base.step_seconds is not None
    assert base.tensor_peak_bytes == pytest.approx(_plain(script, ""), rel=0.02)

    ck = rows["checkpoint"]
    assert ck.hooked == [f"checkpoint: Net.blocks.{i}" for i in range(6)] + ["checkpoint: Net.head"]
    assert ck.tensor_peak_bytes == pytest.approx(_plain(script, "checkpoint"), rel=0.05)
    assert ck.tensor_delta is not None and ck.tensor_delta < -0.3  # activations dominate

    ac = rows["autocast"]
    assert ac.hooked == ["autocast: Net.forward (cpu, bfloat16)"]
    assert ac.tensor_peak_bytes == pytest.approx(_plain(script, "autocast"), rel=0.05)

    off = rows["offload"]
    assert not off.applied and off.tensor_peak_bytes is None
    assert any("cannot lower the peak" in note for note in off.notes)

    acc = rows["accumulate"]
    assert acc.effective_batch == BATCH and acc.hooked == [
        f"accumulate: BATCH={BATCH // K} (micro-batch), 4 steps per update"
    ]
    assert acc.tensor_peak_bytes == pytest.approx(_plain(script, "accumulate"), rel=0.10)
    assert acc.tensor_peak_bytes < base.tensor_peak_bytes / 2


def test_fit_remedies_alone_prints_the_table_and_writes_it_to_json(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TRAIN)
    out = tmp_path / "fit.json"
    argv = ["fit", "train.py", "--param", "BATCH", "--remedies", "checkpoint", "--what-if-at", "256"]
    r = subprocess.run(
        [sys.executable, "-m", "memgauge", *argv, "--json", str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert "checkpoint" in r.stdout and "hooked Net.blocks.0" in r.stdout
    data = json.loads(out.read_text())
    names = [row["name"] for row in data["remedies"]["rows"]]
    assert names == ["baseline", "checkpoint"]
    assert data["remedies"]["rows"][0]["effective_batch"] == 256


def test_remedies_hook_a_compiled_model_from_outside_its_compiled_region(tmp_path: Path) -> None:
    # the same loop with torch.compile(model): the hooks keep out of what Dynamo traces (where the
    # tracker's broke the program) and hook the model it compiles, at its OptimizedModule's call
    script = tmp_path / "train.py"
    script.write_text(TRAIN.replace("model = Net()", 'model = torch.compile(Net(), backend="aot_eager")'))
    target = Target("script", str(script))
    plan = RemedyPlan(target, ["checkpoint", "autocast"], parameter="BATCH", value=256, cwd=str(tmp_path))
    table = run_remedies(plan)
    rows: dict[str, RemedyRow] = {row.name: row for row in table.rows}
    assert rows["baseline"].tensor_peak_bytes is not None
    assert rows["checkpoint"].hooked == [f"checkpoint: Net.blocks.{i}" for i in range(6)] + [
        "checkpoint: Net.head"
    ]
    assert rows["autocast"].hooked == ["autocast: Net.forward (cpu, bfloat16)"]
    for name in ("checkpoint", "autocast"):
        assert rows[name].applied and rows[name].tensor_peak_bytes is not None, rows[name]
