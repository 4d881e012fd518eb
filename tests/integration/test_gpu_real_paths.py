"""The real GPU sources for the per-phase windows, ``--gpu-snapshot`` and NVML's utilisation over
time (marked ``gpu``: they skip without a CUDA device): each program runs under ``memgauge run`` in
a child process, with known allocations whose figures are exact (``torch.empty`` of a multiple of
512 B allocates exactly that)."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from tests.conftest import MIB, run_memgauge

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("real_cuda")]


PHASES = """
import torch, memgauge
MIB = 1 << 20
with memgauge.phase("a"):
    x = torch.empty(64 * MIB, dtype=torch.uint8, device="cuda")
    del x
with memgauge.phase("b"):
    y = torch.empty(128 * MIB, dtype=torch.uint8, device="cuda")
    with memgauge.phase("inner"):
        z = torch.empty(32 * MIB, dtype=torch.uint8, device="cuda")
        del z
    del y
"""


def test_phase_windows_are_exact_on_real_cuda(tmp_path: Path) -> None:
    (tmp_path / "phases.py").write_text(PHASES)
    result = run_memgauge(["--torch", "full", "phases.py"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.profile is not None
    (device,) = result.profile["gpu"]
    got = {w["name"]: w["allocated_peak"] for w in device["windows"] if w["kind"] == "phase"}
    # nothing is held between the phases: each peak is its own tensors, b's includes inner's
    assert got == {"a": 64 * MIB, "inner": 160 * MIB, "b": 160 * MIB}


SNAPSHOT = """
import torch
MIB = 1 << 20

def grow():
    return torch.empty(256 * MIB, dtype=torch.uint8, device="cuda")  # the peak's line

held = torch.empty(64 * MIB, dtype=torch.uint8, device="cuda")
big = grow()
del big
"""


def test_gpu_snapshot_opens_and_charges_the_peak_to_its_line(tmp_path: Path) -> None:
    (tmp_path / "snap.py").write_text(SNAPSHOT)
    result = run_memgauge(["--gpu-snapshot", "s.pickle", "snap.py"], tmp_path)
    assert result.returncode == 0, result.stderr
    with open(tmp_path / "s.pickle", "rb") as f:
        snapshot = pickle.load(f)  # what memory_viz opens
    assert snapshot["device_traces"][0]
    assert result.profile is not None
    (device,) = result.profile["gpu"]
    top = device["peak_lines"][:2]
    assert [(Path(a["file"]).name, a["line"], a["bytes"]) for a in top] == [
        ("snap.py", 6, 256 * MIB),
        ("snap.py", 8, 64 * MIB),
    ], device["notes"]


BUSY = """
import time, torch
a = torch.randn(4096, 4096, device="cuda")
end = time.monotonic() + 1.5
while time.monotonic() < end:
    a = (a @ a).tanh()
torch.cuda.synchronize()
"""


def test_nvml_utilisation_is_sampled_over_time(tmp_path: Path) -> None:
    (tmp_path / "busy.py").write_text(BUSY)
    result = run_memgauge(["busy.py"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.profile is not None
    (device,) = result.profile["gpu"]
    series = device["utilization"]
    assert len(series["t_seconds"]) >= 5
    assert all(g is None or 0 <= g <= 100 for g in series["gpu"])
    assert max(g or 0 for g in series["gpu"]) >= 50  # 1.5 s of back-to-back matmuls
