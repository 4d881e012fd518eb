"""``memgauge check`` for real: child processes, real profiles, real config files, the real cgroup
(or the watchdog) stopping a program that grows past its budget."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memgauge._units import format_bytes
from tests.conftest import MIB, PROGRAMS, marker

GROW = PROGRAMS / "grow.py"
SPIKE = PROGRAMS / "spike.py"
# 200 MiB kept, then a freed 800 MiB numpy spike: its line holds the peak (a bytes * n spike keeps
# the GIL, and its growth can be charged to the next line: docs/measurement.md)
NUMPY_SPIKE = PROGRAMS / "lines_spike.py"


def check(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memgauge", "check", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def profiles(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two saved profiles of spike.py: 100 MiB and 300 MiB spikes."""
    d = tmp_path_factory.mktemp("check")
    for name, mib in (("small", 100), ("big", 300)):
        r = subprocess.run(
            [sys.executable, "-m", "memgauge", "run", "-q", "--json", f"{name}.json", str(SPIKE)],
            cwd=d,
            env={**os.environ, "SPIKE_MIB": str(mib)},
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "memgauge", "run", "-q", "--json", "numpy.json", str(NUMPY_SPIKE)],
        cwd=d,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    return d


@pytest.mark.parametrize("cgroup", ["auto", "off"])
def test_enforce_stops_a_growing_program_at_its_budget(cgroup: str, tmp_path: Path) -> None:
    r = check(
        "--budget",
        "rss=1GiB",
        "--enforce",
        "--cgroup",
        cgroup,
        "-q",
        "--json",
        "p.json",
        str(GROW),
        cwd=tmp_path,
    )
    assert r.returncode == 1, r.stderr  # over budget
    assert r.stdout == ""  # stopped before it could print how far it got (3 GiB)
    profile = json.loads((tmp_path / "p.json").read_text())
    assert profile["exit"]["signal_name"] == "SIGKILL"
    stopped = profile["exit"]["stopped_by"]
    assert stopped and "1.0 GiB" in stopped
    assert ("(cgroup)" in stopped) or ("(watchdog)" in stopped)
    if cgroup == "off":
        assert "(watchdog)" in stopped
    # stopped before ~1.1 GiB: at the step that crossed 1 GiB, not at 3 GiB
    assert profile["peak"]["resident_bytes"] <= 1.1 * 1024 * MIB
    assert max(p["peak_resident_bytes"] for p in profile["processes"]) <= 1.1 * 1024 * MIB
    # the growing line is named, in the profile and in the verdict
    line = marker(GROW, "grow")
    top = profile["peak"]["attribution"][0]
    assert (Path(top["file"]).name, top["line"]) == ("grow.py", line)
    assert top["bytes"] >= 600 * MIB
    assert f"grow.py:{line}" in r.stderr
    assert "OVER BUDGET" in r.stderr and "stopped by --enforce" in r.stderr


def test_saved_profile_within_and_over_budget(profiles: Path) -> None:
    ok = check("--budget", "rss=1GiB wall=60s", "small.json", cwd=profiles)
    assert ok.returncode == 0, ok.stderr
    assert "within budget" in ok.stdout
    over = check("--budget", "rss=500MiB", "numpy.json", cwd=profiles)
    assert over.returncode == 1
    row = next(line for line in over.stdout.splitlines() if line.startswith("rss "))
    assert "500 MiB" in row and "FAIL" in row
    # the spike's line, where the peak was made
    assert f"lines_spike.py:{marker(NUMPY_SPIKE, 'spike')}" in over.stdout
    assert "OVER BUDGET: 1 of 1 limit" in over.stdout
    # the same verdict as Markdown, for a pull-request comment: the table, the line, the verdict
    md = check("--budget", "rss=500MiB", "--format", "md", "numpy.json", cwd=profiles)
    assert md.returncode == 1, md.stderr
    assert md.stdout.startswith("| limit | budget | measured | margin | status |\n| :--- | ---: |")
    assert f"lines_spike.py:{marker(NUMPY_SPIKE, 'spike')}` in spike" in md.stdout
    assert md.stdout.endswith("**OVER BUDGET: 1 of 1 limit**\n")


def test_baseline_with_a_tolerance(profiles: Path) -> None:
    same = check("--baseline", "small.json", "--max-increase", "10%", "small.json", cwd=profiles)
    assert same.returncode == 0, same.stdout
    worse = check("--baseline", "small.json", "--max-memory-increase", "10%", "big.json", cwd=profiles)
    assert worse.returncode == 1
    assert "baseline" in worse.stdout and "+ 10%" in worse.stdout
    # memory and time tolerances are separate: time alone, generous, passes
    timing = check("--baseline", "small.json", "--max-time-increase", "500%", "big.json", cwd=profiles)
    assert timing.returncode == 0, timing.stdout
    limits = [line.split()[0] for line in timing.stdout.splitlines()[1:] if line and not line[0].isspace()]
    assert "wall" in limits and "cpu" in limits
    assert not any(name == "rss" or name.endswith(".rss") for name in limits), timing.stdout


def test_repeated_runs_are_judged_by_their_medians(tmp_path: Path) -> None:
    r = check(
        "--budget",
        "rss=1GiB",
        "--repeat",
        "3",
        "-q",
        "--json",
        "p.json",
        "--",
        sys.executable,
        "-c",
        "pass",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.glob("p-*.json")) == ["p-1.json", "p-2.json", "p-3.json"]
    assert "run 3 of 3" in r.stderr and "medians of 3 runs" in r.stderr


def test_a_failing_program_within_budget_exits_2(tmp_path: Path) -> None:
    r = check(
        "--budget",
        "rss=1GiB",
        "-q",
        "--no-json",
        "--",
        sys.executable,
        "-c",
        "raise SystemExit(3)",
        cwd=tmp_path,
    )
    assert r.returncode == 2
    assert "the program failed (exit 3)" in r.stderr


def test_policies_from_pyproject(profiles: Path, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[tool.memgauge]\npolicy = "api-pod"\n'
        '[tool.memgauge.policies]\nedge-pc = "rss=200MiB"\napi-pod = { rss = "2GiB" }\n'
    )
    big = str(profiles / "big.json")
    assert check("--policy", "edge-pc", big, cwd=tmp_path).returncode == 1
    assert check(big, cwd=tmp_path).returncode == 0  # the default policy
    unknown = check("--policy", "nope", big, cwd=tmp_path)
    assert unknown.returncode == 64
    assert "edge-pc" in unknown.stderr and "api-pod" in unknown.stderr


def test_machine_formats(profiles: Path, tmp_path: Path) -> None:
    out = tmp_path / "v.json"
    r = check("--budget", "rss=200MiB", "--format", "json", "-o", str(out), "big.json", cwd=profiles)
    assert r.returncode == 1
    verdict = json.loads(out.read_text())
    assert verdict["results"][0]["status"] == "fail"
    assert verdict["results"][0]["measured"] > 200 * MIB
    bmf_path = tmp_path / "bmf.json"
    r = check(
        "--budget",
        "rss=1GiB",
        "--format",
        "bmf",
        "-o",
        str(bmf_path),
        "--name",
        "spike",
        "big.json",
        cwd=profiles,
    )
    assert r.returncode == 0, r.stderr
    bmf = json.loads(bmf_path.read_text())
    assert set(bmf) == {"spike"}
    assert bmf["spike"]["peak-rss-bytes"]["value"] > 300 * MIB


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--budget", "rss=512MX", "x.json"], "unknown unit 'MX'"),
        (["x.json"], "nothing to check against"),
        (["--max-increase", "10%", "--budget", "rss=1GiB", "x.json"], "--max-increase needs --baseline"),
        (["--baseline", "x.json", "x.json"], "--baseline needs --max-increase"),
        (["--baseline", "x.json", "--max-increase", "0.1", "x.json"], "takes a percentage such as 10%"),
        (["--budget", "fit.rss=1GiB", "--enforce", "prog.py"], "--enforce needs a whole-run"),
        (["--budget", "rss=1GiB", "--enforce", "x.json"], "--enforce needs a program"),
        (["--budget", "rss=1GiB", "--format", "json", "prog.py"], "needs -o PATH"),
        (["--budget", "rss=1GiB", "--repeat", "0", "prog.py"], "--repeat must be at least 1"),
        (["--budget", "rss=1GiB"], "give a program to run or profiles"),
    ],
)
def test_usage_errors(args: list[str], message: str, tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text("open('ran', 'w').close()\n")
    (tmp_path / "x.json").write_text("{}")
    r = check(*args, cwd=tmp_path)
    assert r.returncode == 64, r.stderr
    assert message in r.stderr
    assert not (tmp_path / "ran").exists()


def test_enforce_stops_a_program_past_its_wall_limit(tmp_path: Path) -> None:
    sleeper = "import time; time.sleep(30)"
    r = check(
        "--budget",
        "wall=1s",
        "--enforce",
        "-q",
        "--json",
        "p.json",
        "--",
        sys.executable,
        "-c",
        sleeper,
        cwd=tmp_path,
    )
    assert r.returncode == 1, r.stderr
    profile = json.loads((tmp_path / "p.json").read_text())
    assert profile["exit"]["stopped_by"] == "wall time crossed the limit 1.00 s (watchdog)"
    assert 1.0 <= profile["wall_seconds"] < 3.0


CHILD_OVER = PROGRAMS / "child_over_limit.py"


@pytest.mark.parametrize("mode", ["kill", "cache"])
def test_a_child_past_the_enforced_limit_is_over_budget_never_within(mode: str, tmp_path: Path) -> None:
    """Issue 16: the child of a program touches 300 MiB under an enforced 200 MiB limit (``kill``:
    anonymous memory, the OOM killer kills it; ``cache``: a file read, the kernel reclaims at the
    limit) while the parent exits 0. Either way the figure is at least the limit: over budget."""
    r = check(
        "--budget",
        "rss=200MiB",
        "--enforce",
        "-q",
        "--format",
        "json",
        "-o",
        "v.json",
        "--json",
        "p.json",
        str(CHILD_OVER),
        cwd=tmp_path,
        env={"CHILD_MODE": mode},
    )
    assert r.returncode == 1, r.stderr  # over budget
    profile = json.loads((tmp_path / "p.json").read_text())
    assert profile["exit"]["code"] == 0  # the parent ended well
    measurement = profile["environment"]["measurement"]
    assert measurement["cgroup_limit"] == {"bytes": 200 * MIB, "reached": True}
    verdict = json.loads((tmp_path / "v.json").read_text())
    (rss,) = verdict["results"]
    assert (rss["status"], rss["at_least"]) == ("fail", True)
    # at least the limit: what a container needs may be higher still (the child's own VmHWM counts
    # library pages another group was charged for)
    assert rss["measured"] >= 200 * MIB
    if mode == "kill":
        assert "child exit -9" in r.stdout
        assert measurement["oom_kills"] == 1
        assert "OOM killer killed a process of the tree at the enforced limit 200 MiB" in rss["note"]
    else:
        assert "child exit 0" in r.stdout
        assert measurement["oom_kills"] == 0
        least = format_bytes(int(rss["measured"]))
        assert rss["note"] == f"usage reached the enforced limit 200 MiB: at least {least}"
    # shown as at least the measured figure: the limit, or the need where it is above the limit,
    # the same figure in the table, its note and the JSON
    shown = re.search(r"rss +200 MiB +≥ (\d+) MiB", r.stderr)
    assert shown is not None and int(shown.group(1)) >= 200, r.stderr
    assert f"≥ {format_bytes(int(rss['measured']))}" in r.stderr
    if mode == "kill":
        assert rss["note"].endswith(f": at least {format_bytes(int(rss['measured']))}")
    assert "OVER BUDGET" in r.stderr


def test_a_child_within_the_enforced_limit_passes(tmp_path: Path) -> None:
    # the child-process variant of a pass: 50 MiB under an enforced 200 MiB
    r = check(
        "--budget", "rss=200MiB", "--enforce", "-q", str(CHILD_OVER), cwd=tmp_path, env={"CHILD_MIB": "50"}
    )
    assert r.returncode == 0, r.stderr
    assert "child exit 0" in r.stdout and "within budget" in r.stderr and "≥" not in r.stderr
