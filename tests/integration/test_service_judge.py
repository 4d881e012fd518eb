"""The service's verdict (``service/_judge.py``, through the gate's ``judge``) on real sandboxed
runs (``execute_job``, the path the service's workers take): a program whose child touches more
than the policy's memory budget, under the sandbox's enforced limit, is ``fail``, never ``pass``,
however the parent ends; the same program within the budget passes (issue 16)."""

from __future__ import annotations

import json
import os
import sys
import uuid

import pytest

from memgauge.isolation import Sandbox, Upload
from memgauge.isolation._probes import unshare_problem
from memgauge.service._judge import outcome_values
from memgauge.service._models import Submission
from memgauge.sweep import Job, execute_job
from tests.conftest import MIB, PROGRAMS

ROOT = sys.platform == "linux" and os.geteuid() == 0
PROBLEM = unshare_problem(("--net", "--mount")) if sys.platform == "linux" else "not Linux"
pytestmark = pytest.mark.skipif(not ROOT or bool(PROBLEM), reason=f"needs root and namespaces ({PROBLEM})")


def judged(child_mib: int, budget: str = "rss=200MiB", allow_unmeasured: bool = False) -> dict[str, object]:
    code = (PROGRAMS / "child_over_limit.py").read_text()
    # the child's size as an argument-free constant: the sandbox scrubs the environment
    code = code.replace('os.environ.get("CHILD_MIB", "300")', repr(str(child_mib)))
    job = Job(
        f"judge-{uuid.uuid4().hex[:6]}",
        ("main.py",),
        sandbox=Sandbox(memory_bytes=200 * MIB, wall_seconds=60),
        upload=Upload("main.py", code.encode()),
    )
    result = execute_job(job)
    sub = Submission(policy="test", budget=budget, allow_unmeasured=allow_unmeasured)
    return outcome_values(sub, result)


def test_a_child_killed_at_the_sandbox_limit_is_fail() -> None:
    values = judged(300)
    assert values["exit_code"] == 0, values  # the parent ended well
    assert values["verdict"] == "fail", values
    verdict = json.loads(str(values["verdict_json"]))
    (rss,) = verdict["results"]
    assert (rss["status"], rss["at_least"]) == ("fail", True)
    assert "OOM killer killed a process of the tree" in rss["note"]


def test_a_child_within_the_sandbox_limit_passes() -> None:
    values = judged(50)
    assert values["verdict"] == "pass", values
    assert "within budget" in str(values["reason"])


def test_a_child_killed_under_a_budget_without_rss_is_an_error() -> None:
    # the policy limits time only; the server's own memory cap killed the child: not a pass
    values = judged(300, budget="wall=60s")
    assert values["verdict"] == "error", values
    assert "OOM killer" in str(values["reason"])


def test_a_limit_the_host_cannot_measure_is_unmeasured_unless_the_policy_allows_it() -> None:
    # no GPU in the run: its gpu limit has no figure; the rss limit passes
    values = judged(50, budget="rss=200MiB gpu=1MiB")
    assert values["verdict"] == "unmeasured", values
    assert "could not measure gpu (no GPU figure" in str(values["reason"])
    verdict = json.loads(str(values["verdict_json"]))
    assert [r["status"] for r in verdict["results"]] == ["pass", "unmeasured"]
    assert (verdict["ok"], verdict["allow_unmeasured"]) == (False, False)
    allowed = judged(50, budget="rss=200MiB gpu=1MiB", allow_unmeasured=True)
    assert allowed["verdict"] == "pass", allowed
    # a breach is a fail whatever the policy allows
    assert judged(300, budget="rss=200MiB gpu=1MiB", allow_unmeasured=True)["verdict"] == "fail"
