"""CPU utilisation over time from a real ``memgauge run`` of a torch loop with two DataLoader
workers, each item burning a known amount of CPU time in its worker and each step a known amount
in the main loop: the watcher's per-process series, summed over time, hold that CPU (CPU time
does not depend on how busy the machine is, so the check holds under load)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from memgauge.model import Profile
from tests.conftest import run_memgauge

ITEMS, BATCH, BURN, MAIN_BURN = 24, 2, 0.06, 0.04

LOOP = f"""
import time, torch
from torch.utils.data import DataLoader, Dataset

def burn(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass

class Busy(Dataset):
    def __len__(self):
        return {ITEMS}
    def __getitem__(self, i):
        burn({BURN})
        return torch.ones(4)

torch.set_num_threads(1)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for x in DataLoader(Busy(), batch_size={BATCH}, num_workers=2):
    burn({MAIN_BURN})
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()
"""


def cpu_seconds(cpu: dict[str, Any], pid: int) -> float:
    """A process's series summed over its intervals: the CPU seconds it used while sampled."""
    t = [0.0, *cpu["t_seconds"]]
    t[0] = t[1] - float(cpu["interval_seconds"])
    for s in cpu["processes"]:
        if s["pid"] == pid:
            start = s["start_index"]
            return float(sum(v * (t[start + i + 1] - t[start + i]) for i, v in enumerate(s["cores"])))
    return 0.0


def test_workers_burning_known_cpu_show_it_over_time_and_in_the_steady_state(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    (tmp_path / "loop.py").write_text(LOOP)
    r = run_memgauge(["-q", "--no-lines", "loop.py"], tmp_path, env={"MEMGAUGE_FLOP_STEP": "off"})
    assert r.returncode == 0, r.stderr
    assert r.profile is not None and "training" in r.profile, r.stderr
    # the CPU figures as written match the documented schema (the rest is the other tests' part)
    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "profile.schema.json").read_text())
    props = schema["$defs"]["training"]["properties"]
    for key in ("cpu", "cpu_main_loop", "cpu_workers", "cpu_busy_share", "cpu_saturated"):
        jsonschema.Draft202012Validator({**props[key], "$defs": schema["$defs"]}).validate(
            r.profile["training"][key]
        )
    assert Profile.from_dict(r.profile).to_dict()["training"] == r.profile["training"]
    training = r.profile["training"]
    roles = {p["role"]: p for p in training["processes"] if p["role"]}
    assert set(roles) == {"main loop", "DataLoader worker 0", "DataLoader worker 1"}
    cpu = training["cpu"]
    assert cpu["interval_seconds"] >= 0.2 and len(cpu["cores"]) >= 1
    assert all(len(core) == len(cpu["t_seconds"]) for core in cpu["cores"])
    assert all(0.0 <= v <= 1.0 for core in cpu["cores"] for v in core)
    workers = [roles["DataLoader worker 0"]["pid"], roles["DataLoader worker 1"]["pid"]]
    burnt = sum(cpu_seconds(cpu, pid) for pid in workers)
    # every item's burn, plus a little for the workers' own start, collation and pickling
    assert ITEMS * BURN * 0.95 <= burnt <= ITEMS * BURN + 0.6
    # the series agree with the watcher's CPU totals of the same processes: what a worker used
    # after the last full interval is in the series too (its last interval, or the run's end)
    totals = sum(roles[f"DataLoader worker {i}"]["cpu_seconds"] for i in (0, 1))
    assert burnt == pytest.approx(totals, abs=0.02)
    main = cpu_seconds(cpu, roles["main loop"]["pid"])
    assert main >= (ITEMS // BATCH) * MAIN_BURN * 0.95
    # in the steady steps the workers burn and the main loop too: both are seen busy (how busy
    # depends on how loaded the machine is: the burns take longer on a busy one)
    assert training["cpu_workers"] is not None and training["cpu_workers"] > 0.03
    assert training["cpu_main_loop"] is not None and training["cpu_main_loop"] > 0.03
    assert 0 <= training["cpu_busy_share"] <= 1 and isinstance(training["cpu_saturated"], bool)
