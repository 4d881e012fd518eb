"""GPU utilisation over the steady steps from real ``memgauge run``s of CPU loops with NVML faked
in the runner (``MEMGAUGE_TEST_FAKE_NVML``: a device that reports fixed kernel and memory busy
shares, used by the program): the steady figures, and the bound they sharpen: a loop that waits
for its data is data-bound, one that does not while the GPU is mostly idle is host-bound."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from memgauge.model import Profile
from tests.conftest import run_memgauge

LOOP = """
import sys, time
import memgauge

def batches(n, wait):
    for i in range(n):
        time.sleep(wait)  # loading
        yield i

for _ in memgauge.timed_iter(batches(12, float(sys.argv[1]))):
    busy = time.monotonic() + 0.04  # the host's own work, the GPU left idle
    while time.monotonic() < busy:
        pass
    memgauge.step(samples=8)
"""

GPU_BUSY, MEMORY_BUSY = 20, 35


def run(tmp_path: Path, wait: float) -> dict[str, Any]:
    (tmp_path / "loop.py").write_text(LOOP)
    used = 3 << 30
    frame = {"used": used, "utilization": GPU_BUSY, "memory_utilization": MEMORY_BUSY}
    nvml = {
        "devices": [
            {
                "uuid": "GPU-5e1f",
                "name": "NVIDIA H100 80GB HBM3",
                "total": 85_520_809_984,
                "frames": [{**frame, "processes": {"$main": used}}],
            }
        ]
    }
    (tmp_path / "nvml.json").write_text(json.dumps(nvml))
    env = {"MEMGAUGE_TEST_FAKE_NVML": str(tmp_path / "nvml.json")}
    r = run_memgauge(["-q", "--no-lines", "loop.py", str(wait)], tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert r.profile is not None and "training" in r.profile, r.stderr
    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "profile.schema.json").read_text())
    props = schema["$defs"]["training"]["properties"]
    for key in ("bound", "gpu_utilization", "gpu_memory_utilization"):
        jsonschema.Draft202012Validator(props[key]).validate(r.profile["training"][key])
    assert Profile.from_dict(r.profile).to_dict()["training"] == r.profile["training"]
    training: dict[str, Any] = r.profile["training"]
    return training


def test_a_loop_waiting_for_data_with_an_idle_gpu_is_data_bound(tmp_path: Path) -> None:
    training = run(tmp_path, wait=0.12)  # 3 x the step's own work
    assert training["gpu_utilization"] == pytest.approx(GPU_BUSY / 100)
    assert training["gpu_memory_utilization"] == pytest.approx(MEMORY_BUSY / 100)
    assert training["data_wait_share"] >= 0.5 and training["bound"] == "data"
    assert "the GPU runs kernels 20% of the time" in training["verdict"]


def test_a_loop_not_waiting_for_data_with_an_idle_gpu_is_host_bound(tmp_path: Path) -> None:
    training = run(tmp_path, wait=0.0)
    assert training["gpu_utilization"] == pytest.approx(GPU_BUSY / 100)
    assert training["data_wait_share"] < 0.5 and training["bound"] == "host"
    assert training["verdict"].startswith("The GPU runs kernels only 20% of the time")
