"""The real GPU sources (marked ``gpu``: they skip without a CUDA device): torch's allocator read
by ``GpuLog`` exact to its 512-byte rounding, NVML's process match and the CUDA context, the five
layers of a real run, and ``--enforce`` capping torch's reserve. Each measurement runs in a fresh
child process, so that it starts with a clean CUDA context (and this one's is left alone). The
expected figures are those of docs/gpu-facts.md (an H100, torch 2.11, driver 580)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MIB, run_memgauge

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("real_cuda")]


def child(code: str) -> Any:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


ALLOCATOR = """
import json, torch
from memgauge.capture import GpuLog, TorchCudaSource
torch.zeros(1, device="cuda")  # CUDA initialised by the program, never by memgauge
log = GpuLog(TorchCudaSource())
log.window_end("step", "start")
sizes = [1, 511, 512, 513, 1 << 20, (1 << 20) + 1, (10 << 20) - 1, 10 << 20, (10 << 20) + 1, 100 << 20]
base = torch.cuda.memory_allocated()
for n in sizes:
    x = torch.empty(n, dtype=torch.uint8, device="cuda")
    del x
    log.window_end("step", str(n))
print(json.dumps({"base": base, "record": log.record()}))
"""


def test_allocator_peaks_per_window_are_exact_to_the_512_byte_rounding() -> None:
    out = child(ALLOCATOR)
    windows = out["record"]["windows"][1:]
    for w in windows:
        n = int(w["name"])
        assert w["allocated_peak"] - out["base"] == -(-n // 512) * 512, w
        assert w["allocated_end"] == out["base"]
    (device,) = out["record"]["devices"]
    assert device["allocated_peak"] == out["base"] + (100 << 20)
    assert device["uuid"] and not device["uuid"].startswith("GPU-")


NVML = """
import json, os, torch
from memgauge.watcher import NvmlSampler, open_nvml
source, why = open_nvml()
assert source is not None, why
torch.zeros(1, device="cuda")
sampler = NvmlSampler(source)
sampler.poll()
uuid = str(torch.cuda.get_device_properties(0).uuid)
reserved = torch.cuda.memory_reserved()
samples = sampler.stop()
row = next(r for r in samples.devices if r.device.uuid == uuid)
out = {"pid": os.getpid(), "processes": row.processes, "reserved": reserved, "used": row.used_peak}
print(json.dumps(out))
"""


def test_nvml_lists_the_process_by_pid_with_reserved_plus_a_context() -> None:
    out = child(NVML)
    used = out["processes"][str(out["pid"])]
    context = used - out["reserved"]
    # gpu-facts: 610 MiB after the first kernel (lazy loading); a multiple of 2 MiB
    assert 256 * MIB <= context <= 4096 * MIB
    assert context % (2 * MIB) == 0
    assert out["used"] >= used
    print(f"context after the first kernel: {context / MIB:.0f} MiB")


HOLD = """
import torch
x = torch.ones(256 << 20, dtype=torch.float32, device="cuda")  # 1 GiB
torch.cuda.synchronize()
import time
end = time.monotonic() + 1.0  # held long enough for several NVML polls
while time.monotonic() < end:
    x.mul_(1.0)
torch.cuda.synchronize()
"""


def test_a_real_run_fills_every_layer(tmp_path: Path) -> None:
    program = tmp_path / "hold.py"
    program.write_text(HOLD)
    result = run_memgauge(["--torch", "full", str(program)], tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.profile is not None
    device = result.profile["gpu"][0]
    assert device["tensors_peak"] == 1 << 30
    assert device["allocated_peak"] >= 1 << 30
    assert device["reserved_peak"] >= device["allocated_peak"]
    assert device["processes"][0]["matched_by"] == "pid"
    assert device["process_peak"] == device["reserved_peak"] + device["context"]
    assert device["context"] >= 256 * MIB
    assert device["device_used_peak"] >= device["process_peak"]
    assert device["utilization_peak"] is not None
    print(
        json.dumps(
            {
                k: device[k]
                for k in (
                    "tensors_peak",
                    "allocated_peak",
                    "reserved_peak",
                    "process_peak",
                    "device_used_peak",
                    "context",
                )
            }
        )
    )


FRACTION = """
import torch
torch.zeros(1, device="cuda")
try:
    x = torch.empty(int(__import__("os").environ["ASK"]), dtype=torch.uint8, device="cuda")
    del x
except torch.OutOfMemoryError:
    pass
"""


@pytest.mark.parametrize(("ask", "code", "says"), [(1 << 30, 0, "survived"), (3 << 30, 1, "out of memory")])
def test_enforce_caps_torch_at_the_limit(tmp_path: Path, ask: int, code: int, says: str) -> None:
    program = tmp_path / "fraction.py"
    program.write_text(FRACTION)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "memgauge",
            "check",
            "--enforce",
            "--budget",
            "gpu=2GiB",
            "--format",
            "json",
            "-o",
            "v.json",
            "--json",
            "p.json",
            str(program),
        ],
        cwd=tmp_path,
        env={**os.environ, "ASK": str(ask)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    (device,) = json.loads((tmp_path / "p.json").read_text())["gpu"]
    assert device["cap_bytes"] == 2 << 30
    assert device["cap_outcome"] == says
    (row,) = json.loads((tmp_path / "v.json").read_text())["results"]
    if code:
        assert result.returncode == 1, result.stderr
        assert row["note"].startswith("out of memory under --enforce")
        assert device["ooms"] >= 1
    else:
        assert row["note"].startswith("survived --enforce")
