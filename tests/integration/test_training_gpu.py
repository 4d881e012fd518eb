"""The training figures on a real CUDA device (marked ``gpu``: they skip without one): a bf16
Linear stack under autocast whose FLOPs are 6 x batch x in x out per layer, counted on the device
in bfloat16, and its MFU judged against the datasheet's dense bf16 peak of the device torch names
(an H100 here: 989.5 TFLOP/s, docs/gpu-facts.md); the achieved rate is the program's own."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from memgauge.sections.training import known_peak
from tests.conftest import run_memgauge

pytestmark = pytest.mark.gpu

BATCH, WIDTHS, STEPS = 512, [2048, 4096, 2048], 30

LOOP = f"""
import json, sys, time, torch
widths = {WIDTHS}
model = torch.nn.Sequential(*[torch.nn.Linear(i, o) for i, o in zip(widths, widths[1:])]).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn({BATCH}, widths[0], device="cuda", requires_grad=True)
ends = []
for _ in range({STEPS}):
    opt.zero_grad()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(x).float().pow(2).mean()
    loss.backward()
    opt.step()
    torch.cuda.synchronize()  # so that each step's time is its own on the device
    ends.append(time.monotonic())
json.dump({{"ends": ends, "name": torch.cuda.get_device_name()}}, open(sys.argv[1], "w"))
"""


@pytest.fixture(autouse=True)
def cuda() -> None:
    torch: Any = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device here")


def test_flops_and_mfu_of_a_bf16_step_on_the_device(tmp_path: Path) -> None:
    (tmp_path / "loop.py").write_text(LOOP)
    r = run_memgauge(["-q", "loop.py", str(tmp_path / "own.json")], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.profile is not None
    t = r.profile["training"]
    own = json.loads((tmp_path / "own.json").read_text())
    expected = sum(6 * BATCH * i * o for i, o in itertools.pairwise(WIDTHS))
    assert t["flops_per_step"] == pytest.approx(expected, rel=0.01)
    assert (t["dtype"], t["device"]) == ("bfloat16", own["name"])
    peak = known_peak(own["name"], "bfloat16")
    if peak is None:
        assert t["mfu"] is None  # a device not in the table has no MFU
        return
    assert t["peak_flops_per_second"] == peak.flops_per_second
    assert t["mfu"] == pytest.approx(t["achieved_flops_per_second"] / peak.flops_per_second)
    assert 0 < t["mfu"] < 1
    ends = own["ends"]
    steady = [
        row["index"]
        for row in t["rows"]
        if not row["warmup"] and not row["flops_counted"] and row["index"] > 0
    ]
    own_rate = len(steady) / sum(ends[i] - ends[i - 1] for i in steady)
    assert t["steps_per_second"] == pytest.approx(own_rate, rel=0.05)
