"""``memgauge plan`` against real runs together in a real memory cgroup, caches cold (issue 34).

Ground truth by construction (tests/programs/plan_peak.py): three programs that each hold ~30 MiB
and add 100 MiB for 1 s, at 0.5 s, 2.5 s and 4.5 s. Started together, their peaks never meet
and they fit a 300 MiB machine, less than the sum of their peaks (~400 MiB); with their peaks
aligned they do not, and the kernel OOM-kills. A program holding ~150 MiB fits 3 times in 512 MiB
and not 4: ``--max-copies`` finds 3 and proves it with a run of 3 that survives and one of 4 that
does not.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memgauge.model import load_plan
from memgauge.runner import RunOptions, parse_target, run_program, run_together
from memgauge.watcher import create_memory_group
from tests.conftest import MIB, PROGRAMS

PEAK = PROGRAMS / "plan_peak.py"


@pytest.fixture(autouse=True)
def _needs_a_group() -> None:
    group, reason = create_memory_group("auto")
    if group is None:
        pytest.skip(f"no memory cgroup: {reason}")
    group.close()


def profile_of(tmp_path: Path, name: str, *args: str) -> Path:
    profile = run_program(parse_target([str(PEAK), *args]), RunOptions(cgroup="auto", lines="off"))
    assert profile.exit.code == 0
    path = tmp_path / f"{name}.json"
    profile.save(path)
    return path


def plan(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memgauge", "plan", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def test_three_offset_peaks_fit_a_machine_smaller_than_their_sum(tmp_path: Path) -> None:
    # 1 s wide peaks 2 s apart: a profile's times include memgauge's start-up in the measured
    # process (0.5-0.9 s on a loaded machine, varying by run), so alignment is good to ~0.4 s
    peaks = (0.5, 2.5, 4.5)
    paths = [profile_of(tmp_path, f"p{i}", str(at), "100", "6", "20", "1") for i, at in enumerate(peaks)]
    out = tmp_path / "plan.json"
    r = plan(
        *map(str, paths),
        "--machine",
        "300MiB",
        "--verify",
        "--random-runs",
        "0",
        "--trials",
        "2000",
        "--json",
        str(out),
        "--format",
        "md",
        cwd=tmp_path,
    )
    record = load_plan(out)
    # the worst case (every peak at once) is over the machine: judged by it they do not fit
    assert record.worst_bytes > 300 * MIB, r.stdout
    assert not record.fits and r.returncode == 1
    # started together their peaks do not meet: well under the machine, and under the sum of peaks
    assert record.given_bytes < 250 * MIB < record.worst_bytes
    assert record.aligned_bytes > 300 * MIB
    given, worst = record.runs
    assert (given.label, worst.label) == ("given", "worst")
    # the kernel agrees: together they survive, aligned the group OOM-kills
    assert given.survived, given
    assert given.peak_bytes < 300 * MIB
    assert not worst.survived and worst.oom_kills >= 1, worst
    assert given.agrees and worst.agrees
    d = record.distribution
    assert d is not None and d.trials == 2000
    assert d.exceed_low <= d.exceed_probability <= d.exceed_high
    assert record.given_bytes <= d.max_bytes <= record.aligned_bytes + 8 * MIB
    assert "OOM-killed" in r.stdout and "survived" in r.stdout  # the markdown report's runs


def test_max_copies_found_and_proven(tmp_path: Path) -> None:
    path = profile_of(tmp_path, "hold150", "0", "135", "1.5", "0", "1.5")
    out = tmp_path / "plan.json"
    r = plan(str(path), "--machine", "512MiB", "--max-copies", "--verify", "--json", str(out), cwd=tmp_path)
    record = load_plan(out)
    m = record.max_copies
    assert m is not None and m.copies == 3, r.stdout + r.stderr
    assert m.proof is not None and m.proof.survived and m.proof.copies == 3
    assert m.refutation is not None and m.refutation.copies == 4
    assert not m.refutation.survived and m.refutation.oom_kills >= 1
    assert m.proven and r.returncode == 0, r.stdout + r.stderr
    assert "max copies by worst: 3" in r.stdout and "proven" in r.stdout


def test_a_program_is_measured_once_and_planned(tmp_path: Path) -> None:
    script = tmp_path / "small.py"
    script.write_text("data = b'x' * (30 << 20)\nprint(len(data))\n")
    r = plan(
        str(script), "--machine", "1GiB", "--copies", "2", "--format", "json", "--trials", "200", cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert (data["format"], data["version"]) == ("memgauge-plan", 2)
    members = data["members"]
    assert [m["name"] for m in members] == ["small#1", "small#2"]
    assert all(30 * MIB < m["need_bytes"] < 80 * MIB for m in members)
    assert members[0]["command"] == ["python", str(script)]


def test_run_together_charges_every_child_to_one_group() -> None:
    hold = [sys.executable, str(PEAK), "0", "0", "0.5", "60"]
    run = run_together([hold, hold], [0.0, 0.0], 512 * MIB)
    assert run.survived and run.exit_codes == [0, 0]
    # both children's 60 MiB at once, in the one group
    assert 120 * MIB <= run.peak_bytes < 300 * MIB
    killed = run_together([hold, hold], [0.0, 0.0], 100 * MIB)
    assert not killed.survived and killed.oom_kills >= 1
