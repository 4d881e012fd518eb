"""``memgauge check --prove`` on real child processes in real memory cgroups (issue 16, part 1): a
pass is verified under the budget's rss as a hard limit, caches cold; OOM-killed there, the pass
becomes a fail, the child-process variant included."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memgauge.watcher import create_memory_group
from tests.conftest import PROGRAMS


@pytest.fixture(autouse=True)
def _needs_a_group() -> None:
    group, reason = create_memory_group("auto")
    if group is None:
        pytest.skip(f"no memory cgroup: {reason}")
    group.close()


def check(
    budget: str, program: Path, tmp_path: Path
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    out = tmp_path / "verdict.json"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "memgauge",
            "check",
            "--budget",
            budget,
            "--prove",
            "--no-json",
            "-q",
            "--format",
            "json",
            "-o",
            str(out),
            str(program),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PROVE_COUNTER": str(tmp_path / "runs")},
        timeout=300,
    )
    return r, json.loads(out.read_text()) if out.exists() else {}


def test_a_child_killed_under_the_proven_limit_turns_the_pass_into_a_fail(tmp_path: Path) -> None:
    # the measured run's child writes 40 MiB (a pass under 150 MiB), the proof's 300 MiB
    r, verdict = check("rss=150MiB", PROGRAMS / "prove_child_grows.py", tmp_path)
    assert r.returncode == 1, r.stderr
    (rss,) = verdict["results"]
    assert rss["status"] == "fail" and rss["measured"] < 150 << 20
    assert "OOM-killed" in rss["note"] and "cold" in rss["note"]
    # a run OOM-killed at the limit hit it: never "limit hit 0 times"
    hits = re.search(r"limit hit (\d+) times", rss["note"])
    assert hits is not None and int(hits.group(1)) >= 1, rss["note"]


def test_a_pass_that_survives_the_proof_stays_a_pass(tmp_path: Path) -> None:
    r, verdict = check("rss=400MiB", PROGRAMS / "fit_anon.py", tmp_path)
    assert r.returncode == 0, r.stderr
    (rss,) = verdict["results"]
    assert (
        rss["status"] == "pass" and "survived" in rss["note"] and "x the unlimited wall time" in rss["note"]
    )


def test_prove_needs_a_whole_run_rss_limit(tmp_path: Path) -> None:
    r, _ = check("wall=10s", PROGRAMS / "fit_anon.py", tmp_path)
    assert r.returncode == 64 and "--prove needs a whole-run rss limit" in r.stderr


@pytest.mark.parametrize("child", [False, True], ids=["process", "child-process"])
def test_the_proof_counts_the_hits_of_a_run_killed_at_its_limit(tmp_path: Path, child: bool) -> None:
    """150 MiB written (by the program, or by a child it starts) under a 100 MiB hard limit:
    OOM-killed, so the limit was hit (the kernel reclaims, then kills, only there); under 400 MiB
    and unlimited it never was."""
    from memgauge.runner import Target, prove_limit

    if child:
        program = tmp_path / "parent.py"
        program.write_text(
            "import subprocess, sys\n"
            f"sys.exit(subprocess.run([sys.executable, {str(PROGRAMS / 'fit_anon.py')!r}]).returncode)\n"
        )
    else:
        program = PROGRAMS / "fit_anon.py"
    base, killed = prove_limit(Target("script", str(program)), 100 << 20, cold=False, roots=[])
    assert base.survived and base.oom_kills == 0 and base.limit_hits == 0, base
    assert not killed.survived and killed.oom_kills >= 1, killed
    assert killed.limit_hits >= 1, killed
    _, roomy = prove_limit(Target("script", str(program)), 400 << 20, cold=False, roots=[])
    assert roomy.survived and roomy.limit_hits == 0, roomy
