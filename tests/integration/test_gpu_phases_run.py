"""Per-phase GPU windows through a real run: a torch program with two phases under ``memgauge run``
and ``memgauge check``, the allocator scripted inside the measured process
(``MEMGAUGE_TEST_FAKE_CUDA``): each phase gets its window, and ``fit.gpu=`` is judged on it."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MIB, PROGRAMS

pytest.importorskip("torch")

PROGRAM = PROGRAMS / "gpu_fake_phases.py"
# (allocated, reserved) MiB per reset: before "load", in load, between, fit before its step, fit after
LIMITS = "fit.gpu=729MiB load.gpu=320MiB"
ARGS = ["--format", "json", "-o", "v.json", "--json", "profile.json", "--gpu-snapshot", "snap.pickle"]
FRAMES = [(50, 60), (300, 320), (10, 320), (700, 720), (400, 730), (100, 730)]


def line_of(text: str) -> int:
    return next(i for i, line in enumerate(PROGRAM.read_text().splitlines(), 1) if text in line)


def snapshot() -> dict[str, Any]:
    """A history in torch's shape: 64 MiB at the load line, 32 MiB at fit's line then freed."""
    here = str(PROGRAM)
    load = [{"filename": here, "line": line_of("data = torch.ones"), "name": "<module>"}]
    fit = [{"filename": here, "line": line_of("total = "), "name": "<module>"}]
    events = [
        {"action": "alloc", "addr": 1 << 20, "size": 64 * MIB, "frames": load},
        {"action": "alloc", "addr": 1 << 30, "size": 32 * MIB, "frames": fit},
        {"action": "free_requested", "addr": 1 << 30, "size": 32 * MIB, "frames": []},
    ]
    block = {"address": 1 << 20, "size": 64 * MIB, "state": "active_allocated", "frames": load}
    return {"segments": [{"device": 0, "address": 1 << 20, "blocks": [block]}], "device_traces": [events]}


def script(tmp: Path) -> dict[str, str]:
    frames = [
        {
            "allocated_bytes.all.peak": a * MIB,
            "allocated_bytes.all.current": a * MIB // 2,
            "reserved_bytes.all.peak": r * MIB,
            "reserved_bytes.all.current": r * MIB,
            "active_bytes.all.peak": a * MIB,
        }
        for a, r in FRAMES
    ]
    script = {"devices": [{"uuid": "436fa273", "frames": frames}], "snapshot": snapshot()}
    (tmp / "cuda.json").write_text(json.dumps(script))
    return {
        "MEMGAUGE_TEST_FAKE_CUDA": str(tmp / "cuda.json"),
        "MEMGAUGE_TEST_FAKE_NVML": str(tmp / "none.json"),
    }


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, str]:
    tmp = tmp_path_factory.mktemp("gpu-phases")
    env = script(tmp)
    (tmp / "none.json").write_text(json.dumps({"devices": []}))
    proc = subprocess.run(
        [sys.executable, "-m", "memgauge", "check", "--budget", LIMITS, *ARGS, str(PROGRAM)],
        cwd=tmp,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return tmp, proc.returncode, proc.stderr


def test_each_phase_gets_its_gpu_window_and_check_judges_it(checked: tuple[Path, int, str]) -> None:
    tmp, code, stderr = checked
    assert code == 1, stderr
    (device,) = json.loads((tmp / "profile.json").read_text())["gpu"]
    got = [
        (w["kind"], w["name"], w["allocated_peak"] // MIB, w["reserved_peak"] // MIB)
        for w in device["windows"]
    ]
    # the step's window runs from the start to its end; fit's spans its step's reset
    assert got == [("phase", "load", 300, 320), ("step", "0", 700, 720), ("phase", "fit", 700, 730)]
    assert (device["allocated_peak"], device["reserved_peak"]) == (700 * MIB, 730 * MIB)
    verdict = json.loads((tmp / "v.json").read_text())
    # limits are inclusive: load's 320 MiB passes at 320 MiB, fit's 730 MiB fails at 729 MiB
    assert [(r["measured"], r["status"]) for r in verdict["results"]] == [
        (730 * MIB, "fail"),
        (320 * MIB, "pass"),
    ]
    assert verdict["results"][0]["note"].startswith("torch reserved in 'fit' on device 0: a lower bound")


def test_the_gpu_snapshot_is_written_and_its_peak_charged_to_lines(checked: tuple[Path, int, str]) -> None:
    tmp, _, stderr = checked
    with open(tmp / "snap.pickle", "rb") as f:
        assert pickle.load(f) == snapshot()  # what memory_viz opens: the history as torch dumps it
    (device,) = json.loads((tmp / "profile.json").read_text())["gpu"]
    assert device["snapshot"] == str(tmp / "snap.pickle")
    got = [(a["file"], a["line"], a["bytes"]) for a in device["peak_lines"]]
    assert got == [
        (str(PROGRAM), line_of("data = torch.ones"), 64 * MIB),
        (str(PROGRAM), line_of("total = "), 32 * MIB),
    ]
    assert any(n.endswith("96.0 MiB allocated at the peak its 3 events replay to") for n in device["notes"])
    assert "lines at the GPU peak" in stderr
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "profile.schema.json").read_text())
    gpu = {"$defs": schema["$defs"], **schema["properties"]["gpu"]}
    jsonschema.Draft202012Validator(gpu).validate(json.loads((tmp / "profile.json").read_text())["gpu"])
