"""Data movement in a real ``memgauge run`` of a CPU training loop fed by a DataLoader with two
workers: each step copies its batch to the ``meta`` device (``.to`` three times and ``copy_`` once:
4 x the batch's bytes, host to device, on two known lines), and copies within the CPU (``.cpu()``,
a dtype change, ``copy_`` between CPU tensors) that must count nothing; the loop's result is the
same as without memgauge. Each worker's batches reach the main process in shared memory: their
bytes, known, are in the worker's row."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from memgauge.model import Profile
from tests.conftest import run_memgauge

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "profile.schema.json"

pytest.importorskip("torch")

BATCH, WIDTH, STEPS, WORKERS = 8, 64, 8, 2
NBYTES = BATCH * WIDTH * 4

LOOP = f"""
import json, sys, torch
from torch.utils.data import DataLoader, Dataset

class Rows(Dataset):
    def __len__(self):
        return {BATCH * STEPS}
    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn({WIDTH}, generator=g)

if __name__ == "__main__":
    torch.manual_seed(0)
    model = torch.nn.Linear({WIDTH}, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for x in DataLoader(Rows(), batch_size={BATCH}, num_workers={WORKERS}):
        for _ in range(3):
            x.to("meta")  # THREE_COPIES
        torch.empty_like(x, device="meta").copy_(x)  # ONE_COPY
        x.cpu(); x.to(torch.float64); x.clone().copy_(x); x.to("cpu")
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
    json.dump([p.detach().flatten().tolist() for p in model.parameters()], open(sys.argv[1], "w"))
"""


def test_copies_to_another_device_counted_per_step_and_line_and_worker_batches(tmp_path: Path) -> None:
    program = tmp_path / "loop.py"
    program.write_text(LOOP)
    lines = LOOP.splitlines()
    three = next(i for i, line in enumerate(lines, 1) if "THREE_COPIES" in line)
    one = next(i for i, line in enumerate(lines, 1) if "ONE_COPY" in line)
    # no FLOP counting: its first use imports torch._dynamo, seconds this test does not need
    env = {"MEMGAUGE_FLOP_STEP": "off"}
    r = run_memgauge(["-q", "loop.py", str(tmp_path / "measured.json")], tmp_path, env=env, timeout=180)
    assert r.returncode == 0, r.stderr
    assert r.profile is not None
    t = r.profile["training"]
    assert t["steps"] == STEPS
    # every step: four copies of one batch to the meta device; nothing for the CPU->CPU ones
    assert [row["h2d_bytes"] for row in t["rows"]] == [4 * NBYTES] * STEPS
    assert [row["d2h_bytes"] for row in t["rows"]] == [0] * STEPS
    c = t["copies"]
    assert (c["h2d_bytes"], c["d2h_bytes"], c["d2d_bytes"]) == (4 * NBYTES * STEPS, 0, 0)
    assert c["copies"] == 4 * STEPS
    assert c["h2d_bytes_per_step"]["median"] == 4 * NBYTES
    assert c["h2d_bytes_per_second"] > 0
    by_line = {(row["line"], row["direction"]): (row["bytes"], row["copies"]) for row in c["lines"]}
    assert by_line == {
        (f"{program}:{three}", "h2d"): (3 * NBYTES * STEPS, 3 * STEPS),
        (f"{program}:{one}", "h2d"): (NBYTES * STEPS, STEPS),
    }
    # each worker sent its batches (STEPS / WORKERS of them) in shared memory
    workers = {p["role"]: p for p in t["processes"] if p["role"].startswith("DataLoader worker")}
    assert set(workers) == {"DataLoader worker 0", "DataLoader worker 1"}
    for w in workers.values():
        assert w["shared_bytes"] == STEPS // WORKERS * NBYTES
        assert w["shared_storages"] == STEPS // WORKERS
        assert 0 < w["pickled_bytes"] < w["shared_bytes"]  # handles, not the data
        assert w["shared_bytes_per_second"] > 0
    # the profile's format: the schema's, and read back whole
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(r.profile)
    assert Profile.from_dict(r.profile).to_dict()["training"] == t
    # the hooks change nothing the loop computes
    plain = subprocess.run(
        [sys.executable, str(program), str(tmp_path / "plain.json")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert plain.returncode == 0, plain.stderr
    measured = json.loads((tmp_path / "measured.json").read_text())
    assert measured == json.loads((tmp_path / "plain.json").read_text())
