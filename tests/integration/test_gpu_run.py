"""GPU figures through a real run: ``memgauge run`` and ``memgauge check`` on a real torch program
(CPU), with the allocator faked inside the measured process (``MEMGAUGE_TEST_FAKE_CUDA``) and NVML
faked in the runner (``MEMGAUGE_TEST_FAKE_NVML``): the records cross the wire format, the runner's
sampler thread polls, and the assembly, report and verdict see what the scripts say, exactly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MIB, PROGRAMS, run_memgauge

pytest.importorskip("torch")

TRAIN = PROGRAMS / "gpu_fake_train.py"
CONTEXT = 610 * MIB  # after the first kernel, lazy loading (gpu-facts)
UNOWNED = 9_240_576
STRANGER = 1024 * MIB
# the allocator's peaks per step window (allocated, reserved): the second step is the largest
STEPS = [(100 * MIB, 120 * MIB), (200 * MIB + 512, 220 * MIB), (150 * MIB, 220 * MIB)]


def frame(allocated: int, reserved: int, ooms: int = 0) -> dict[str, int]:
    return {
        "allocated_bytes.all.peak": allocated,
        "allocated_bytes.all.current": allocated // 2,
        "reserved_bytes.all.peak": reserved,
        "reserved_bytes.all.current": reserved,
        "active_bytes.all.peak": allocated,
        "active_bytes.all.current": allocated // 2,
        "num_alloc_retries": ooms,
        "num_ooms": ooms,
    }


def scripts(tmp: Path) -> dict[str, str]:
    cuda = {"devices": [{"uuid": "436fa273", "frames": [frame(a, r) for a, r in STEPS]}]}
    process = 220 * MIB + CONTEXT
    nvml = {
        "devices": [
            {
                "uuid": "GPU-436fa273",
                "name": "NVIDIA H100 80GB HBM3",
                "total": 85_520_809_984,
                "frames": [
                    {"used": STRANGER + UNOWNED, "utilization": 0, "processes": {"999": STRANGER}},
                    {
                        "used": process + STRANGER + UNOWNED,
                        "utilization": 80,
                        "processes": {"$main": process, "999": STRANGER},
                    },
                ],
            }
        ]
    }
    (tmp / "cuda.json").write_text(json.dumps(cuda))
    (tmp / "nvml.json").write_text(json.dumps(nvml))
    return {
        "MEMGAUGE_TEST_FAKE_CUDA": str(tmp / "cuda.json"),
        "MEMGAUGE_TEST_FAKE_NVML": str(tmp / "nvml.json"),
    }


@pytest.fixture(scope="module")
def faked(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    tmp = tmp_path_factory.mktemp("gpu")
    result = run_memgauge([str(TRAIN)], tmp, env=scripts(tmp))
    assert result.returncode == 0, result.stderr
    assert result.profile is not None
    return result.profile, result.stderr


def test_every_layer_arrives_in_the_profile_exactly(faked: tuple[dict[str, Any], str]) -> None:
    profile, _ = faked
    main = profile["processes"][0]["pid"]
    (device,) = profile["gpu"]
    assert device["uuid"] == "436fa273"
    assert device["name"] == "NVIDIA H100 80GB HBM3"
    assert device["allocated_peak"] == 200 * MIB + 512
    assert device["reserved_peak"] == 220 * MIB
    assert device["process_peak"] == 220 * MIB + CONTEXT
    assert device["context"] == CONTEXT
    assert device["device_used_peak"] == 220 * MIB + CONTEXT + STRANGER + UNOWNED
    assert device["tensors_peak"] is None  # the program's tensors live on the CPU
    # one window per optimizer step; the script's last frame repeats
    assert [w["allocated_peak"] for w in device["windows"]] == [a for a, _ in STEPS] + [150 * MIB] * 2
    assert [w["pid"] for w in device["windows"]] == [main] * 5
    ours, other = device["processes"]
    assert (ours["pid"], ours["matched_by"], ours["used_peak"]) == (main, "pid", 220 * MIB + CONTEXT)
    assert (other["pid"], other["matched_by"]) == (999, "")
    assert device["utilization_peak"] == 80
    assert {"allocated_peak", "reserved_peak", "process_peak", "device_used_peak", "context"} <= set(
        device["source"]
    )


def test_the_terminal_report_names_the_context(faked: tuple[dict[str, Any], str]) -> None:
    _, stderr = faked
    assert "GPU 0 (NVIDIA H100 80GB HBM3)" in stderr
    gpu = stderr[stderr.index("GPU 0 (") :]
    process = next(line for line in gpu.splitlines() if line.startswith("process "))
    assert "+610 MiB" in process and "CUDA context" in process


def test_without_a_gpu_a_torch_run_says_so_in_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMGAUGE_TEST_FAKE_")}
    result = subprocess.run(
        [sys.executable, "-m", "memgauge", "run", "--json", "p.json", str(TRAIN)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    profile = json.loads((tmp_path / "p.json").read_text())
    assert "gpu" not in profile
    why = profile["environment"]["measurement"]["gpu"]
    assert why.startswith("no GPU figures from outside the program")
    # one line, which the terminal's width may wrap
    assert result.stderr.count("GPU: none measured") == 1
    assert f"GPU: none measured ({why})" in " ".join(result.stderr.split())


@pytest.mark.parametrize(("limit", "code"), [("gpu=800MiB", 1), ("gpu=830MiB", 0)])
def test_check_judges_the_process_peak_on_the_device(tmp_path: Path, limit: str, code: int) -> None:
    # the process peaks at 220 + 610 = 830 MiB: over 800 MiB, within 830 MiB (limits are inclusive)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "memgauge",
            "check",
            "--budget",
            limit,
            "--format",
            "json",
            "-o",
            "v.json",
            str(TRAIN),
        ],
        cwd=tmp_path,
        env={**os.environ, **scripts(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == code, result.stderr
    (row,) = json.loads((tmp_path / "v.json").read_text())["results"]
    assert row["measured"] == 830 * MIB
    assert "torch reserved 220 MiB" in row["note"]


REPORTS = ("--format", "json", "-o", "v.json", "--json", "p.json")


def with_ooms(tmp: Path, ooms: int) -> dict[str, str]:
    env = scripts(tmp)
    cuda = json.loads((tmp / "cuda.json").read_text())
    cuda["devices"][0]["frames"] = [frame(a, r, ooms=ooms) for a, r in STEPS]
    (tmp / "cuda.json").write_text(json.dumps(cuda))
    return env


@pytest.mark.parametrize(
    ("ooms", "code", "says"), [(0, 0, "survived --enforce"), (1, 1, "out of memory under --enforce")]
)
def test_enforce_caps_torch_and_reports_survived_or_out_of_memory(
    tmp_path: Path, ooms: int, code: int, says: str
) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "memgauge",
            "check",
            "--enforce",
            "--budget",
            "gpu=1GiB",
            *REPORTS,
            str(TRAIN),
        ],
        cwd=tmp_path,
        env={**os.environ, **with_ooms(tmp_path, ooms)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == code, result.stderr
    (row,) = json.loads((tmp_path / "v.json").read_text())["results"]
    assert row["note"].startswith(says), row["note"]
    assert "torch's reserve capped at 1.0 GiB" in row["note"]
    (device,) = json.loads((tmp_path / "p.json").read_text())["gpu"]
    assert device["cap_bytes"] == 1 << 30  # the program's tracker saw the cap in its environment
    assert device["cap_outcome"] == ("out of memory" if ooms else "survived")


def test_the_profile_with_gpu_figures_matches_the_schema(faked: tuple[dict[str, Any], str]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "profile.schema.json").read_text())
    profile, _ = faked
    # the gpu part alone: other parts of the profile are other tests' (tests/integration/test_schema.py)
    gpu = {"$defs": schema["$defs"], **schema["properties"]["gpu"]}
    jsonschema.Draft202012Validator(gpu).validate(profile["gpu"])
    # NVML's utilisation over time, one sample per poll: 0 % before the program's GPU work, then 80 %
    series = profile["gpu"][0]["utilization"]
    assert series["interval_seconds"] == 0.15
    assert len(series["t_seconds"]) == len(series["gpu"]) == len(series["memory"]) >= 1
    assert series["gpu"][0] == 0 and set(series["gpu"]) <= {0, 80}
    assert series["t_seconds"] == sorted(series["t_seconds"])
    measurement = {"$defs": schema["$defs"], **schema["$defs"]["measurement"]}
    jsonschema.Draft202012Validator(measurement).validate(profile["environment"]["measurement"])
