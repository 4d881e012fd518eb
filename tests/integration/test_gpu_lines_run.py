"""GPU time per line through a real ``memgauge run``: a program with a line that sleeps and a line
that spins, NVML faked in the runner (``MEMGAUGE_TEST_FAKE_NVML``) to report the device idle for
its first ten polls (about 1.5 s) and 90 % busy after. The fake scripts by poll, not by time, so
the program times itself from its own start (the runner starts NVML's sampler with it): it sleeps
until 1.5 s after its start (at least 0.3 s), then spins for 0.8 s. The spinning line ran while
the device was busy and must get most of the GPU seconds; the sleeping one little or none."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from memgauge.model import Profile
from tests.conftest import run_memgauge

PROGRAM = """
import os, time


def age():
    # seconds since this process started (/proc/self/stat's starttime, on the boot clock)
    start = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19])
    return time.clock_gettime(time.CLOCK_BOOTTIME) - start / os.sysconf("SC_CLK_TCK")


def spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


time.sleep(max(0.3, 1.5 - age()))
spin(0.8)
"""
SLEEP_LINE, SPIN_LINES = 17, (13, 14)  # the loop's time goes to its "while" or its "pass"
IDLE_POLLS, BUSY = 10, 90


def test_the_line_that_ran_while_the_gpu_was_busy_gets_its_gpu_time(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(PROGRAM)
    used = 2 << 30
    frame = {"used": used, "processes": {"$main": used}}
    frames = [{**frame, "utilization": 0}] * IDLE_POLLS + [{**frame, "utilization": BUSY}]
    nvml = {
        "devices": [{"uuid": "GPU-9a1", "name": "NVIDIA H100 80GB HBM3", "total": 80 << 30, "frames": frames}]
    }
    (tmp_path / "nvml.json").write_text(json.dumps(nvml))
    r = run_memgauge(["prog.py"], tmp_path, env={"MEMGAUGE_TEST_FAKE_NVML": str(tmp_path / "nvml.json")})
    assert r.returncode == 0, r.stderr
    assert r.profile is not None
    lines = {(row["file"].rsplit("/", 1)[-1], row["line"]): row for row in r.profile["lines"]}
    sleep = lines[("prog.py", SLEEP_LINE)]
    spin = [lines[("prog.py", n)] for n in SPIN_LINES if ("prog.py", n) in lines]
    spin_gpu = sum(row.get("gpu_seconds") or 0.0 for row in spin)
    spin_time = sum(
        row["cpu_python_seconds"]
        + row["cpu_native_seconds"]
        + row["wait_seconds"]
        + row["contention_seconds"]
        for row in spin
    )
    total = sum(row.get("gpu_seconds") or 0.0 for row in r.profile["lines"])
    # the spin ran 0.8 s, most of it after the switch to 90 %; the sleep before it, little of it
    assert spin_gpu > 0.5 * total and spin_gpu > sleep.get("gpu_seconds", 0.0)
    assert max(row.get("gpu_busy", 0.0) for row in spin) >= 45 > sleep.get("gpu_busy", 0.0)
    # never more than 90 % of the time the sampler saw the spin run
    assert spin_gpu <= BUSY / 100 * spin_time + 1e-6
    # the utilisation's times are seconds since the run's start, on the lines' clock
    util = r.profile["gpu"][0]["utilization"]
    assert 0 <= util["t_seconds"][0] < 1.0
    assert Profile.from_dict(r.profile).to_dict()["lines"] == r.profile["lines"]
    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "profile.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(r.profile)
    # the reports show the column when a GPU was seen
    assert "gpu busy" in r.stderr, r.stderr
