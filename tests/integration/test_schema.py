"""The profile format: docs/profile.schema.json describes the profiles memgauge really writes, the
schema is strict enough to catch wrong ones, and ``Profile`` round-trips through JSON.

Every profile here comes from a real run: ``memgauge run`` in a child process, and
``memgauge.profile()`` in this one.
"""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest

import memgauge
from memgauge._errors import ProfileFormatError
from memgauge.model import PROFILE, SCHEMA_VERSION, Profile, load_profile
from tests.factories import legacy_profile

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "docs" / "profile.schema.json"

PHASES_SCRIPT = """\
import numpy as np
import memgauge

with memgauge.phase("load"):
    data = np.ones(4_000_000)  # 32 MB, every page written
    with memgauge.phase("parse"):
        tmp = data * 2
        del tmp
with memgauge.phase("fit"):
    model = np.arange(2_000_000, dtype=np.int64)
"""

KILLED_SCRIPT = """\
import os, signal
os.kill(os.getpid(), signal.SIGTERM)
"""

# children start at different times, so their series start at different timeline indices
SPAWNING_SCRIPT = """\
import subprocess, sys, time
time.sleep(0.15)  # children start well after the first samples, whatever the thinning
a = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.2)"])
time.sleep(0.05)
b = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.05)"])
a.wait()
b.wait()
time.sleep(0.05)
"""

THIN_INTERVAL = 0.002
THIN_CAPACITY = 16

# run_program blocks signals, reaps any child and makes its caller a subreaper: run it in a process
# of its own rather than in pytest's
RUN_PROGRAM = """\
import sys
from memgauge.runner import RunOptions, parse_target, run_program

script, out, interval, capacity = sys.argv[1:]
options = RunOptions(interval=float(interval), timeline_capacity=int(capacity))
run_program(parse_target([script]), options).save(out)
"""


# -- helpers -----------------------------------------------------------------------------------------


def memgauge_run(tmp: Path, script: str, *options: str) -> tuple[int, Path]:
    """``python -m memgauge run --json PROFILE [options] script.py`` for real; (exit status, PROFILE)."""
    program = tmp / "program.py"
    program.write_text(script)
    out = tmp / "profile.json"
    proc = subprocess.run(
        [sys.executable, "-m", "memgauge", "run", "-q", "--json", str(out), *options, str(program)],
        capture_output=True,
        text=True,
        cwd=tmp,
        timeout=60,
    )
    assert out.exists(), proc.stderr
    return proc.returncode, out


def check_timeline(profile: dict[str, Any]) -> None:
    """Every column has one entry per sample, and each process series lies inside the timeline and
    lines up with it: at every sample, no process holds more than the tree and the tree holds no more
    than its processes together. Thinning (pairwise max) keeps both inequalities exact."""
    tl = profile["timeline"]
    t = tl["t_seconds"]
    n = len(t)
    assert n >= 1
    for column in ("tree_resident_bytes", "cpu_user_seconds", "cpu_system_seconds"):
        assert len(tl[column]) == n, column
    if tl["cgroup_bytes"] is not None:
        assert len(tl["cgroup_bytes"]) == n
    assert t == sorted(t), "t_seconds goes back in time"
    at: list[list[int]] = [[] for _ in range(n)]
    for series in tl["processes"]:
        start, values = series["start_index"], series["resident_bytes"]
        assert start >= 0 and len(values) >= 1
        assert start + len(values) <= n, f"series of pid {series['pid']} runs past the timeline"
        for i, v in enumerate(values):
            at[start + i].append(v)
    tree = tl["tree_resident_bytes"]
    for i in range(n):
        assert max(at[i], default=0) <= tree[i] <= sum(at[i]), f"sample {i} misaligned"
    assert profile["peak"]["sampled_tree_bytes"] == max(tree)


def round_trips(path: Path) -> None:
    original = json.loads(path.read_text())
    assert list(original)[:2] == ["format", "version"]  # readers look at them first
    loaded = load_profile(path)
    assert loaded.to_dict() == original
    assert Profile.from_json(loaded.to_json()) == loaded
    assert Profile.from_dict(json.loads(loaded.to_json(indent=2))) == loaded


# -- fixtures ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.fixture(scope="module", params=["auto", "off"])
def cli_profile(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    rc, path = memgauge_run(tmp_path_factory.mktemp("cli"), PHASES_SCRIPT, "--cgroup", request.param)
    assert rc == 0
    return path


@pytest.fixture(scope="module")
def inprocess_profile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    with memgauge.profile(interval=0.002) as prof:
        with memgauge.phase("outer"):
            a = np.ones(2_000_000)
            with memgauge.phase("inner"):
                b = np.ones(2_000_000)
                time.sleep(0.02)
                del b
        del a
    path = tmp_path_factory.mktemp("inprocess") / "profile.json"
    prof.save(path)
    return path


@pytest.fixture(scope="module")
def thinned_profile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("thinned")
    program = tmp / "spawn.py"
    program.write_text(SPAWNING_SCRIPT)
    out = tmp / "profile.json"
    subprocess.run(
        [sys.executable, "-c", RUN_PROGRAM, str(program), str(out), str(THIN_INTERVAL), str(THIN_CAPACITY)],
        check=True,
        cwd=tmp,
        timeout=60,
    )
    return out


# -- (a) memgauge run -------------------------------------------------------------------------------


def test_schema_is_valid_draft_2020_12(validator: jsonschema.Draft202012Validator) -> None:
    assert validator.schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert validator.schema["properties"]["version"]["const"] == SCHEMA_VERSION
    assert validator.schema["properties"]["format"]["const"] == PROFILE.format


def test_memgauge_run_profile_matches_schema(
    cli_profile: Path, validator: jsonschema.Draft202012Validator
) -> None:
    data = json.loads(cli_profile.read_text())
    validator.validate(data)
    env = data["environment"]
    assert env["mode"] == "child-process"
    assert env["libraries"]["numpy"] == np.__version__
    assert env["measurement"]["tree_peak_method"] == data["peak"]["method"]
    if env["measurement"]["cgroup"] is None:
        assert data["timeline"]["cgroup_bytes"] is None
        assert data["peak"]["method"] == "sampled tree sum + per-process VmHWM"
    else:
        assert data["timeline"]["cgroup_bytes"] is not None
        assert data["peak"]["method"].startswith("cgroup-") and data["peak"]["includes_page_cache"]
    assert data["exit"] == {
        "code": 0,
        "signal": None,
        "signal_name": None,
        "oom_killed": False,
        "stopped_by": None,
    }
    names = [(p["name"], p["depth"]) for p in data["phases"]]
    assert names == [("load", 0), ("parse", 1), ("fit", 0)]
    load, parse, fit = data["phases"]
    assert parse["parent"] == 0 and load["parent"] is None and fit["parent"] is None
    assert load["start_seconds"] <= parse["start_seconds"] <= parse["end_seconds"] <= load["end_seconds"]
    assert all(p["complete"] for p in data["phases"])
    # 32 MB of ones written inside "load"
    assert load["peak_resident_bytes"] - load["start_resident_bytes"] >= 30_000_000
    check_timeline(data)


def test_killed_program_profile_matches_schema(
    tmp_path: Path, validator: jsonschema.Draft202012Validator
) -> None:
    rc, path = memgauge_run(tmp_path, KILLED_SCRIPT)
    data = json.loads(path.read_text())
    validator.validate(data)
    assert data["exit"]["code"] is None
    assert data["exit"]["signal"] == signal.SIGTERM and data["exit"]["signal_name"] == "SIGTERM"
    assert rc == 128 + signal.SIGTERM
    check_timeline(data)


# -- (b) memgauge.profile() -------------------------------------------------------------------------


def test_inprocess_profile_matches_schema(
    inprocess_profile: Path, validator: jsonschema.Draft202012Validator
) -> None:
    data = load_profile(inprocess_profile).to_dict()
    validator.validate(data)
    assert data["environment"]["mode"] == "in-process"
    assert "measurement" not in data["environment"]
    assert data["exit"] == {
        "code": None,
        "signal": None,
        "signal_name": None,
        "oom_killed": False,
        "stopped_by": None,
    }
    assert [p["pid"] for p in data["processes"]] == [os.getpid()]
    assert [(p["name"], p["parent"]) for p in data["phases"]] == [("outer", None), ("inner", 0)]
    check_timeline(data)


def test_documented_example_matches_schema(validator: jsonschema.Draft202012Validator) -> None:
    doc = (SCHEMA_PATH.parent / "profile-schema.md").read_text()
    examples = re.findall(r"```json\n(.*?)```", doc, re.DOTALL)
    assert len(examples) == 1
    data = json.loads(examples[0])
    validator.validate(data)
    assert Profile.from_dict(data).to_dict() == data
    check_timeline(data)


# -- (c) round trips --------------------------------------------------------------------------------


def test_memgauge_run_profile_round_trips(cli_profile: Path) -> None:
    round_trips(cli_profile)


def test_inprocess_profile_round_trips(inprocess_profile: Path) -> None:
    round_trips(inprocess_profile)


def test_thinned_profile_round_trips(thinned_profile: Path) -> None:
    round_trips(thinned_profile)


def test_a_profile_with_warnings_round_trips_and_matches_schema(
    cli_profile: Path, validator: jsonschema.Draft202012Validator
) -> None:
    data = json.loads(cli_profile.read_text())
    data["warnings"] = [
        {"file": "lines.42.json", "message": "not JSON: the line samples of this process are missing"}
    ]
    validator.validate(data)
    assert Profile.from_dict(copy.deepcopy(data)).to_dict() == data


# -- (d) what readers reject ------------------------------------------------------------------------


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], Any]:
    """A mutation that sets a dotted path (list indices as numbers) of a profile dict to ``value``."""

    def mutate(d: dict[str, Any]) -> Any:
        *parents, last = path.split(".")
        node: Any = d
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[int(last) if isinstance(node, list) else last] = value
        return d

    return mutate


def _delete(path: str) -> Callable[[dict[str, Any]], Any]:
    def mutate(d: dict[str, Any]) -> Any:
        *parents, last = path.split(".")
        node: Any = d
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        del node[last]
        return d

    return mutate


def _chain(*mutations: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
    def mutate(d: dict[str, Any]) -> Any:
        for m in mutations:
            d = m(d)
        return d

    return mutate


REJECTED: dict[str, Callable[[dict[str, Any]], Any]] = {
    # unknown or missing header
    "no format": _delete("format"),
    "another record": _set("format", "memgauge-sweep"),
    "no version": _delete("version"),
    "version 0": _set("version", 0),
    "next version": _set("version", SCHEMA_VERSION + 1),
    "version as text": _set("version", str(SCHEMA_VERSION)),
    "version null": _set("version", None),
    "the current version under the old name": lambda d: legacy_profile(d, SCHEMA_VERSION),
    # malformed
    "not an object": lambda d: [d],
    "no peak": _delete("peak"),
    "no command": _delete("command"),
    "exit is a string": _set("exit", "0"),
    "unknown peak field": _set("peak.bogus", 1),
    "process without pid": _delete("processes.0.pid"),
    "phase is a list": _set("phases.0", ["load"]),
    "unknown series field": _set("timeline.processes.0.bogus", 1),
    "series list is null": _set("timeline.processes", None),
    "warning without its file": _set("warnings", [{"message": "cut short"}]),
    "unknown warning field": _set("warnings", [{"file": "lines.1.json", "message": "x", "pid": 1}]),
}


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_reader_and_schema_reject(
    case: str, cli_profile: Path, validator: jsonschema.Draft202012Validator
) -> None:
    good = json.loads(cli_profile.read_text())
    Profile.from_dict(copy.deepcopy(good))  # the unmutated profile is accepted
    bad = REJECTED[case](copy.deepcopy(good))
    with pytest.raises(ProfileFormatError) as err:
        Profile.from_dict(bad)
    assert err.value.exit_code == 65
    assert not validator.is_valid(bad)


def test_older_versions_read_without_their_missing_parts(cli_profile: Path) -> None:
    current = json.loads(cli_profile.read_text())
    v7 = legacy_profile(current, 7)  # the same fields, before the envelope
    assert Profile.from_dict(v7) == Profile.from_dict(current)
    assert v7["overhead"]["steps"]["bootstrap"] >= 0
    v6 = copy.deepcopy(v7)
    v6["schema_version"] = 6
    del v6["overhead"]
    assert Profile.from_dict(v6).overhead is None
    assert v6["peak"]["needs_bytes"] > 0
    v5 = copy.deepcopy(v6)
    v5["schema_version"] = 5
    for key in [k for k in v5["peak"] if k.startswith("needs_") or k == "page_cache_bytes"]:
        del v5["peak"][key]
    assert Profile.from_dict(v5).peak.needs_bytes == 0 and v5["warnings"] == []
    v4 = copy.deepcopy(v5)
    v4["schema_version"] = 4
    del v4["warnings"]
    assert Profile.from_dict(v4).warnings == []
    v3 = copy.deepcopy(v4)
    v3["schema_version"] = 3
    del v3["metrics"]
    assert Profile.from_dict(v3).metrics == {}
    v2 = copy.deepcopy(v3)
    v2["schema_version"] = 2
    del v2["exit"]["stopped_by"]
    old = Profile.from_dict(v2)
    assert old.exit.stopped_by is None and old.schema_version == SCHEMA_VERSION
    assert old.peak.resident_bytes == v5["peak"]["resident_bytes"] and old.lines
    v1 = copy.deepcopy(v2)
    v1["schema_version"] = 1
    for key in ("lines", "imports", "leaks", "allocation_peak", "reconciliation"):
        del v1[key]
    del v1["peak"]["attribution"]
    oldest = Profile.from_dict(v1)
    assert oldest.lines == [] and oldest.peak.attribution == [] and oldest.allocation_peak is None
    assert oldest.phases == old.phases


def test_reader_rejects_unknown_version_with_its_number(cli_profile: Path) -> None:
    data = json.loads(cli_profile.read_text())
    data["version"] = SCHEMA_VERSION + 1
    with pytest.raises(ProfileFormatError, match=str(SCHEMA_VERSION + 1)) as err:
        Profile.from_json(json.dumps(data))
    assert err.value.exit_code == 65


def test_reader_rejects_what_is_not_a_profile_file(tmp_path: Path) -> None:
    not_json = tmp_path / "not.json"
    not_json.write_text('{"schema_version": 1,')
    for path in (not_json, tmp_path / "missing.json"):
        with pytest.raises(ProfileFormatError) as err:
            load_profile(path)
        assert err.value.exit_code == 65


# the reader checks structure only; the schema also checks types, ranges and closed objects
SCHEMA_ONLY: dict[str, Callable[[dict[str, Any]], Any]] = {
    "wall time as text": _set("wall_seconds", "0.5"),
    "fractional bytes": _set("peak.resident_bytes", 1.5),
    "boolean bytes": _set("peak.error_bound_bytes", True),
    "negative bytes": _set("processes.0.peak_resident_bytes", -1),
    "unknown method": _set("peak.method", "guessed"),
    "signal name without signal": _set("exit.signal_name", "SIGTERM"),
    "exit code and signal": _set("exit.signal", 9),
    "unknown top-level key": _set("bogus", 1),
    "unknown mode": _set("environment.mode", "thread"),
    "cgroup and no-cgroup reason": _chain(
        _set("environment.measurement.cgroup", "/sys/fs/cgroup/memgauge-1"),
        _set("environment.measurement.cgroup_unavailable_reason", "no cgroup"),
    ),
    "empty series": _set("timeline.processes.0.resident_bytes", []),
    "negative start index": _set("timeline.processes.0.start_index", -1),
    "cgroup column as text": _set("timeline.cgroup_bytes", "none"),
    "time as text": _set("started_at", "yesterday"),
    "parent as name": _set("phases.1.parent", "load"),
}


@pytest.mark.parametrize("case", sorted(SCHEMA_ONLY))
def test_schema_rejects_wrong_types(
    case: str, cli_profile: Path, validator: jsonschema.Draft202012Validator
) -> None:
    bad = SCHEMA_ONLY[case](json.loads(cli_profile.read_text()))
    assert not validator.is_valid(bad)


def test_environment_is_open(cli_profile: Path, validator: jsonschema.Draft202012Validator) -> None:
    data = json.loads(cli_profile.read_text())
    data["environment"]["gpu"] = {"name": "any", "memory_bytes": 1}
    data["environment"]["libraries"]["newlib"] = "1.0"
    data["environment"]["measurement"]["memory_limit_bytes"] = 1 << 30
    validator.validate(data)


# -- (e) timeline thinning --------------------------------------------------------------------------


def test_thinned_timeline_stays_aligned(
    thinned_profile: Path, validator: jsonschema.Draft202012Validator
) -> None:
    data = json.loads(thinned_profile.read_text())
    validator.validate(data)
    tl = data["timeline"]
    # it was thinned (the interval doubled at least once) and stayed under its capacity
    assert tl["interval_seconds"] >= 2 * THIN_INTERVAL
    assert data["environment"]["measurement"]["sampling_interval_start_seconds"] == THIN_INTERVAL
    assert len(tl["t_seconds"]) < THIN_CAPACITY
    # children appear after the start, at later timeline indices
    assert len({s["pid"] for s in tl["processes"]}) >= 2
    assert any(s["start_index"] > 0 for s in tl["processes"])
    check_timeline(data)


def test_alignment_check_catches_a_series_past_the_end(thinned_profile: Path) -> None:
    data = json.loads(thinned_profile.read_text())
    check_timeline(copy.deepcopy(data))
    series = data["timeline"]["processes"][-1]
    series["start_index"] = len(data["timeline"]["t_seconds"]) - len(series["resident_bytes"]) + 1
    with pytest.raises(AssertionError, match="runs past the timeline"):
        check_timeline(data)
