"""``memgauge run`` on real torch programs (CPU): the profile's ``torch`` object, with no change to
the program; an out-of-memory error under a memory limit still gives a profile with what was held."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_memgauge

pytest.importorskip("torch")

ROLES = {"parameters", "gradients", "optimizer_state", "activations", "temporaries", "other"}

TRAIN = """
import json, torch
torch.manual_seed(0)
model = torch.nn.Sequential(*[m for _ in range(3) for m in (torch.nn.Linear(256, 256), torch.nn.ReLU())])
opt = torch.optim.Adam(model.parameters())
x = torch.randn(32, 256)
for _ in range(5):
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
state = sum(v.untyped_storage().nbytes() for s in opt.state.values() for v in s.values())
print(json.dumps({"params": sum(p.numel() * 4 for p in model.parameters()), "state": state}))
"""

OOM = """
import resource, torch
model = torch.nn.Linear(512, 512)
torch.optim.SGD(model.parameters(), lr=0.1)
with open("/proc/self/status") as f:
    size = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
# a limit the next allocation cannot fit under: malloc fails, torch raises its CPU OOM error
resource.setrlimit(resource.RLIMIT_AS, (size + (256 << 20), resource.RLIM_INFINITY))
big = torch.empty(1 << 28, dtype=torch.float32)  # 1 GiB
"""


def test_a_training_run_gets_roles_steps_and_exact_parameters_and_adam_state(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TRAIN)
    r = run_memgauge(["-q", "train.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.profile is not None
    truth = json.loads(r.stdout.strip().splitlines()[-1])
    torch = r.profile["torch"]
    assert set(torch["peak_by_role"]) == ROLES and set(torch["max_by_role"]) == ROLES
    assert all(isinstance(v, int) for v in torch["peak_by_role"].values())
    assert torch["max_by_role"]["parameters"] == truth["params"] == 3 * (256 * 256 + 256) * 4
    assert torch["max_by_role"]["gradients"] == truth["params"]
    assert torch["max_by_role"]["optimizer_state"] == truth["state"] == 2 * truth["params"] + 3 * 2 * 4
    assert len(torch["steps"]) == 5
    assert all(s["peak_bytes"] > 0 and s["seconds"] > 0 for s in torch["steps"])
    assert torch["peak_bytes"] == sum(torch["peak_by_role"].values())


def test_torch_off_leaves_no_torch_object(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TRAIN)
    r = run_memgauge(["-q", "--torch=off", "train.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.profile is not None and "torch" not in r.profile


def test_an_out_of_memory_error_under_a_limit_still_writes_the_profile(tmp_path: Path) -> None:
    (tmp_path / "oom.py").write_text(OOM)
    r = run_memgauge(["-q", "--no-lines", "oom.py"], tmp_path)
    assert r.returncode == 1
    assert "DefaultCPUAllocator" in r.stderr
    assert r.profile is not None
    oom = r.profile["torch"]["oom"]
    assert oom["requested_bytes"] == 1 << 30 and oom["device"] == "cpu" and oom["where"] == "uncaught"
    assert oom["by_role"]["parameters"] == (512 * 512 + 512) * 4
    assert oom["tensors"][0]["bytes"] == 512 * 512 * 4 and oom["tensors"][0]["role"] == "parameters"
