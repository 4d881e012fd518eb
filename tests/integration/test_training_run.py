"""Training throughput from real ``memgauge run``s of CPU loops whose truth the programs measure
themselves: a torch DataLoader that sleeps per batch (the data-wait share against the loop's own
timing of ``next``), a Linear stack whose input requires grad (FLOPs = 6 x batch x in x out per
layer; its optimizer's matrix product not counted: MFU's model FLOPs), and a loop without torch
(``memgauge.timed_iter``, ``memgauge.step(samples=)`` and ``memgauge.step(kind)`` counters), whose
rates are compared with its own."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from memgauge.model import Profile
from tests.conftest import run_memgauge

BATCH, WIDTHS, SLEEP, STEPS = 4, [256, 512, 128], 0.02, 14

TRAIN = f"""
import json, sys, time, torch
from torch.utils.data import DataLoader, Dataset

class Slow(Dataset):
    def __len__(self):
        return {BATCH * STEPS}
    def __getitem__(self, i):
        time.sleep({SLEEP})
        return torch.randn({WIDTHS[0]}), torch.randn({WIDTHS[-1]})

torch.manual_seed(0)
widths = {WIDTHS}
model = torch.nn.Sequential(*[torch.nn.Linear(i, o) for i, o in zip(widths, widths[1:])])


class MatrixUpdate(torch.optim.SGD):
    # an update that multiplies matrices (as Shampoo's and Muon's do): not the model's FLOPs
    def step(self, closure=None):
        torch.mm(torch.ones(64, 64), torch.ones(64, 64))
        return super().step(closure)

opt = MatrixUpdate(model.parameters(), lr=0.01)
own = []
start = time.monotonic()
it = iter(DataLoader(Slow(), batch_size={BATCH}))
wait = time.monotonic() - start
while True:
    t0 = time.monotonic()
    try:
        x, y = next(it)
    except StopIteration:
        break
    wait += time.monotonic() - t0
    x.requires_grad_(True)  # so that every layer's step is 6 x batch x in x out
    opt.zero_grad()
    torch.nn.functional.mse_loss(model(x), y).backward()
    opt.step()
    end = time.monotonic()
    own.append([end - start, wait, len(x)])
    start, wait = end, 0.0
json.dump(own, open(sys.argv[1], "w"))
"""

PLAIN = """
import json, sys, time
import memgauge

def items(n):
    for i in range(n):
        time.sleep(0.02)  # loading
        yield i

own = []
start = time.monotonic()
wait = 0.0
it = memgauge.timed_iter(items(12))
while True:
    t0 = time.monotonic()
    try:
        item = next(it)
    except StopIteration:
        break
    wait += time.monotonic() - t0
    busy = time.monotonic() + 0.01
    while time.monotonic() < busy:  # computing
        pass
    for _ in range(3):
        memgauge.step("env")
    memgauge.step(samples=5, tokens=640)
    end = time.monotonic()
    own.append([end - start, wait])
    start, wait = end, 0.0
assert "torch" not in sys.modules
json.dump(own, open(sys.argv[1], "w"))
"""


def run(tmp_path: Path, source: str) -> tuple[dict[str, Any], list[list[float]]]:
    (tmp_path / "loop.py").write_text(source)
    own = tmp_path / "own.json"
    r = run_memgauge(["-q", "loop.py", str(own)], tmp_path, env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    assert r.profile is not None and "training" in r.profile, r.stderr
    # the training part as written matches the documented schema, and reads back the same
    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "profile.schema.json").read_text())
    training_schema = {"$ref": "#/$defs/training", "$defs": schema["$defs"]}
    jsonschema.Draft202012Validator(training_schema).validate(r.profile["training"])
    assert Profile.from_dict(r.profile).to_dict()["training"] == r.profile["training"]
    return r.profile["training"], json.loads(own.read_text())


def steady(training: dict[str, Any]) -> list[int]:
    return [r["index"] for r in training["rows"] if not r["warmup"] and not r["flops_counted"]]


def test_a_sleeping_loader_is_data_wait_and_a_linear_stack_is_six_b_in_out(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    training, own = run(tmp_path, TRAIN)
    assert training["steps"] == STEPS == len(own)
    keep = steady(training)
    assert len(keep) >= STEPS - 4
    own_share = sum(own[i][1] for i in keep) / sum(own[i][0] for i in keep)
    assert own_share > 0.1  # the loader's sleep is a real part of each step, even on a busy machine
    assert training["data_wait_share"] == pytest.approx(own_share, abs=0.05)
    own_rate = len(keep) / sum(own[i][0] for i in keep)
    assert training["steps_per_second"] == pytest.approx(own_rate, rel=0.05)
    assert training["samples_per_second"] == pytest.approx(BATCH * own_rate, rel=0.05)
    assert training["bound"] == ("data" if own_share >= 0.5 else "compute")
    expected = sum(6 * BATCH * i * o for i, o in itertools.pairwise(WIDTHS))
    assert training["flops_per_step"] == pytest.approx(expected, rel=0.01)
    assert training["dtype"] == "float32"
    # MFU against the CPU's peak measured on this machine, and said so
    assert training["peak_source"].startswith("measured:")
    assert training["mfu"] is not None and 0 < training["mfu"] < 1
    assert training["achieved_flops_per_second"] == pytest.approx(expected * training["steps_per_second"])


def test_a_loop_without_torch_counts_steps_samples_waits_and_kinds(tmp_path: Path) -> None:
    training, own = run(tmp_path, PLAIN)
    assert training["steps"] == 12 == len(own)
    keep = steady(training)
    own_rate = len(keep) / sum(own[i][0] for i in keep)
    assert training["steps_per_second"] == pytest.approx(own_rate, rel=0.05)
    assert training["samples_per_second"] == pytest.approx(5 * training["steps_per_second"])
    assert training["tokens_per_second"] == pytest.approx(640 * training["steps_per_second"])
    own_share = sum(own[i][1] for i in keep) / sum(own[i][0] for i in keep)
    assert training["data_wait_share"] == pytest.approx(own_share, abs=0.05)
    assert training["flops_per_step"] is None and training["mfu"] is None  # no torch, no FLOPs
    assert [(c["kind"], c["count"]) for c in training["counters"]] == [("env", 36)]


WORKERS = """
import sys, torch
from torch.utils.data import DataLoader, Dataset

class Files(Dataset):
    def __len__(self):
        return 16
    def __getitem__(self, i):
        with open("blob.bin", "rb") as f:
            return torch.full((4,), float(len(f.read())))

model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for x in DataLoader(Files(), batch_size=2, num_workers=2):
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()
"""


def test_dataloader_workers_are_named_with_their_cpu_and_the_bytes_they_read(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    size = 1 << 20
    (tmp_path / "blob.bin").write_bytes(b"\0" * size)
    training, _ = run(
        tmp_path,
        WORKERS.replace("import sys", "import json, sys").replace(
            "    opt.step()\n", "    opt.step()\njson.dump([], open(sys.argv[1], 'w'))\n"
        ),
    )
    rows = {p["role"]: p for p in training["processes"] if p["role"]}
    assert set(rows) == {"main loop", "DataLoader worker 0", "DataLoader worker 1"}
    workers = [rows["DataLoader worker 0"], rows["DataLoader worker 1"]]
    # the 16 items were read by the workers, 1 MiB each, through read calls
    assert sum(w["rchar"] for w in workers) >= 16 * size
    assert all(w["cpu_seconds"] >= 0 and w["pid"] != rows["main loop"]["pid"] for w in workers)
    assert training["steps"] == 8 and training["data_wait_share"] is not None
