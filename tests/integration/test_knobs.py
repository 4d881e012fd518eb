"""Knobs (issue 21): a parameter reaches the measured program as a module-level constant (replaced
in the running script, the file untouched), an environment variable it reads, or an argument; the
profile records which, and a sweep over a parameter the program never reads is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema

from tests.conftest import PROGRAMS

PROBE = PROGRAMS / "knob_probe.py"


def run_with_knobs(
    tmp_path: Path, request: dict[str, Any], *args: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    profile = tmp_path / "p.json"
    env = {**os.environ, "MEMGAUGE_KNOBS": json.dumps(request)}
    for name, value in request["params"].items():
        env[name] = str(value)
    proc = subprocess.run(
        [sys.executable, "-m", "memgauge", "run", "--quiet", "--json", str(profile), str(PROBE), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    return proc, json.loads(profile.read_text())


def test_a_module_constant_is_replaced_in_the_run_and_the_file_is_untouched(tmp_path: Path) -> None:
    before = PROBE.read_bytes()
    proc, profile = run_with_knobs(tmp_path, {"params": {"BATCH_SIZE": 64, "OTHER": 7}, "args": {}}, "--x")
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    # the value the script ran with, both constants (plain and annotated), as python would run it
    assert seen["batch"] == 64 and seen["other"] == 7
    assert seen["name"] == "__main__" and seen["main_is_me"]
    assert seen["file"] == str(PROBE) and seen["argv"] == [str(PROBE), "--x"]
    assert PROBE.read_bytes() == before
    knobs = profile["environment"]["knobs"]
    assert knobs["BATCH_SIZE"] == {"value": 64, "reached": ["constant"]}
    assert knobs["OTHER"] == {"value": 7, "reached": ["constant"]}
    schema = json.loads((Path(__file__).parents[2] / "docs" / "profile.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(profile)


def test_a_traceback_points_at_the_real_file_and_line(tmp_path: Path) -> None:
    proc, profile = run_with_knobs(tmp_path, {"params": {"BATCH_SIZE": 500}, "args": {}})
    assert proc.returncode == 1
    assert f'File "{PROBE}", line 26, in <module>' in proc.stderr
    assert 'raise ValueError("batch too large")' in proc.stderr
    # memgauge's own frames (the bootstrap, the knob launcher) are not in it
    assert "memgauge" not in proc.stderr.split("Traceback", 1)[1].split("ValueError")[0]
    assert profile["environment"]["knobs"]["BATCH_SIZE"]["reached"] == ["constant"]


def test_an_environment_variable_read_and_one_not_read(tmp_path: Path) -> None:
    proc, profile = run_with_knobs(tmp_path, {"params": {"READ_ME": 5, "NEVER_READ": 9}, "args": {}})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1])["env"] == "5"
    knobs = profile["environment"]["knobs"]
    assert knobs["READ_ME"]["reached"] == ["env"]
    assert knobs["NEVER_READ"]["reached"] == []


def test_an_argument_in_argv(tmp_path: Path) -> None:
    proc, profile = run_with_knobs(tmp_path, {"params": {"ROWS": 12}, "args": {"ROWS": "12"}}, "--rows=12")
    assert proc.returncode == 0, proc.stderr
    assert profile["environment"]["knobs"]["ROWS"]["reached"] == ["argument"]


def sweep(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memgauge", "sweep", "--no-json", "-q", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def test_a_sweep_over_a_parameter_never_read_is_refused_in_one_line(tmp_path: Path) -> None:
    proc = sweep(str(PROBE), "--param", "NOT_READ=1,2,3", cwd=tmp_path)
    assert proc.returncode == 64, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "--param NOT_READ never reached the program" in lines[0]
    assert proc.stdout == ""


def test_a_sweep_sets_a_module_constant(tmp_path: Path) -> None:
    saved = tmp_path / "runs"
    proc = sweep(
        str(PROGRAMS / "fit_batch.py"), "--param", "BATCH_SIZE=4,40", "--save", str(saved), cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    profiles = {p.name: json.loads(p.read_text()) for p in saved.glob("*.json")}
    assert len(profiles) == 2
    peaks = {}
    for profile in profiles.values():
        knob = profile["environment"]["knobs"]["BATCH_SIZE"]
        assert knob["reached"] == ["constant"]
        peaks[knob["value"]] = profile["peak"]["resident_bytes"]
    # 36 more samples of 512 KiB held at once: the constant really changed what the program did
    assert peaks[40] - peaks[4] >= 36 * 512 * 1024 * 0.9
