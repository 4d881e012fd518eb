"""``fit-limit`` stops a limited run that stalls (issue 16): near its limit a program can crawl for
minutes instead of dying. tests/programs/stall_under_limit.py sleeps under any memory limit below
1 GiB: each such run is stopped at the cap and reported ``stalled``, not surviving."""

from __future__ import annotations

import subprocess
import sys

import pytest

from memgauge.runner import Proof, Target, fit_limit, prove_limit
from memgauge.runner._fit import trial
from memgauge.watcher import create_memory_group
from tests.conftest import MIB, PROGRAMS

STALLS = Target("script", str(PROGRAMS / "stall_under_limit.py"))


@pytest.fixture(autouse=True)
def _needs_a_group() -> None:
    group, reason = create_memory_group("auto")
    if group is None:
        pytest.skip(f"no memory cgroup: {reason}")
    group.close()


def test_a_stalled_run_is_stopped_at_the_cap_and_said_stalled() -> None:
    limited = trial(STALLS, 256 * MIB, cold=False, roots=[], wall_cap=1.0)
    assert limited.stalled and not limited.survived and limited.oom_kills == 0, limited
    assert limited.outcome == "stalled"
    assert 1.0 <= limited.wall_seconds < 10.0  # stopped at the cap, not after its minute


def test_the_search_counts_a_stalled_limit_as_not_surviving() -> None:
    # a precision of 2 GiB: one probe, at the run's own need (far below 1 GiB: it stalls); the
    # answer is then the top of the search, the unlimited peak plus the precision
    result = fit_limit(
        STALLS, cold=False, roots=[], precision_bytes=2048 * MIB, stall=2.0, min_stall_seconds=1.0
    )
    base, probe = result.trials
    assert probe.limit_bytes is not None and probe.limit_bytes >= base.needs_bytes > 0, result.trials
    assert probe.stalled and probe.outcome == "stalled" and probe.wall_seconds < 10.0, probe
    assert result.largest_failing_bytes == probe.limit_bytes
    assert result.smallest_surviving_bytes is not None and result.smallest_surviving_bytes >= 2048 * MIB


def test_a_negative_stall_factor_is_a_usage_error() -> None:
    cmd = [sys.executable, "-m", "memgauge", "fit-limit", "--stall", "-1", STALLS.value]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 64 and "--stall" in r.stderr, r.stderr


def test_a_proof_under_a_limit_it_stalls_at_is_stopped_and_not_a_survivor() -> None:
    # `check --prove`, `fit-limit --prove` and the service's proof all run prove_limit
    base, under = prove_limit(STALLS, 256 * MIB, cold=False, roots=[], stall=2.0, min_stall_seconds=1.0)
    assert base.survived and not base.stalled, base
    assert under.stalled and not under.survived and under.outcome == "stalled", under
    assert under.wall_seconds < 10.0  # stopped at the cap, not after its minute
    proof = Proof(256 * MIB, False, base, under)
    assert not proof.survived and "stalled" in proof.note
