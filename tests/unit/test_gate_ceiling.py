"""Verdicts under a memory limit the kernel enforced (``gate/_ceiling.py``), over hand-built
profiles carrying what the runner records (``environment.measurement.cgroup_limit`` and
``oom_kills``): an OOM kill of any process of the tree is over budget, a figure that reached the
enforced limit is "at least the limit", never "within". Each case has its child-process variant:
the main process ends well (exit 0) while a child it started was killed. The same verdicts over
real runs: tests/integration/test_check_cli.py, test_pytest_plugin.py and test_service_judge.py."""

from __future__ import annotations

import json

import pytest

from memgauge.gate import Verdict, judge, judge_runs, parse_budget, result_line, verdict_json
from memgauge.model import Attribution, CpuTimes, ExitStatus, Peak, Profile
from memgauge.render import TerminalVerdictRenderer

MIB = 1 << 20
MAIN, CHILD = 100, 101
KILLED = ExitStatus(code=None, signal=9, signal_name="SIGKILL", oom_killed=True)


def run(
    rss: int,
    *,
    limit: int | None = 200 * MIB,
    kills: int = 0,
    reached: bool = False,
    exit: ExitStatus | None = None,
) -> Profile:
    measurement: dict[str, object] = {"oom_kills": kills, "limit_hits": int(reached)}
    if limit is not None:
        measurement["cgroup_limit"] = {"bytes": limit, "reached": reached or kills > 0}
    return Profile(
        command=["python", "prog.py"],
        exit=exit or ExitStatus(code=0),
        wall_seconds=1.0,
        cpu=CpuTimes(0.5, 0.1),
        peak=Peak(
            resident_bytes=rss,
            method="cgroup-v1 memory.max_usage_in_bytes",
            error_bound_bytes=512 << 10,
            at_seconds=0.5,
            attribution=[Attribution(CHILD, "<string>", 1, "<module>", rss - 20 * MIB)],
        ),
        environment={"measurement": measurement},
    )


@pytest.mark.parametrize(
    "profile",
    [
        # the main process itself killed at the limit (the runner says it stopped it)
        run(200 * MIB, kills=1, exit=KILLED),
        # child-process variant: a child killed at the limit, its parent exits 0
        run(200 * MIB, kills=1),
        # and exits 1 because its child failed
        run(200 * MIB, kills=1, exit=ExitStatus(code=1)),
    ],
    ids=["main-killed", "child-killed-parent-exit-0", "child-killed-parent-exit-1"],
)
def test_an_oom_kill_under_the_enforced_limit_is_over_budget(profile: Profile) -> None:
    v = judge(profile, parse_budget("rss=200MiB wall=1h"))
    rss, wall = v.results
    assert (rss.status, rss.at_least, rss.measured) == ("fail", True, 200 * MIB)
    assert "OOM killer killed a process of the tree at the enforced limit 200 MiB" in rss.note
    assert rss.blame is not None and rss.blame.pid == CHILD
    assert wall.status == "pass"
    assert not v.ok
    text = TerminalVerdictRenderer().render(v)
    assert "≥ 200 MiB" in text and "OVER BUDGET" in text
    data = verdict_json(v)
    assert data["results"][0]["at_least"] is True
    assert Verdict.from_dict(json.loads(json.dumps(data))) == v


def test_a_figure_that_reached_the_enforced_limit_is_at_least_the_limit() -> None:
    # no process killed: the kernel reclaimed (page cache) to keep usage at the limit
    v = judge(run(200 * MIB - 100 * 1024, reached=True), parse_budget("rss=200MiB"))
    (rss,) = v.results
    assert (rss.status, rss.at_least, rss.measured) == ("fail", True, 200 * MIB)
    assert rss.note == "usage reached the enforced limit 200 MiB: at least 200 MiB"
    assert not v.program_failed
    # the same figure without reaching the limit passes: a limit is inclusive
    v = judge(run(200 * MIB - 100 * 1024), parse_budget("rss=200MiB"))
    assert (v.ok, v.results[0].at_least) == (True, False)


def test_a_child_killed_under_a_limit_the_budget_does_not_hold_is_a_failed_program() -> None:
    # wall only in the budget, a sandbox's 200 MiB limit killed the child: not a pass
    v = judge(run(200 * MIB, kills=1), parse_budget("wall=1h"))
    assert v.ok and v.program_failed
    assert (
        v.program_status
        == "exit 0; the OOM killer killed a process of the tree at the enforced limit 200 MiB"
    )
    assert result_line(v).startswith("the program failed (exit 0; the OOM killer")


def test_a_ceiling_below_the_budget_leaves_rss_unjudged_and_the_kill_fails_the_program() -> None:
    v = judge(run(100 * MIB, limit=100 * MIB, kills=1), parse_budget("rss=200MiB"))
    (rss,) = v.results
    assert (rss.status, rss.at_least, rss.measured) == ("unmeasured", True, 100 * MIB)
    assert "below the budget" in rss.note
    assert v.program_failed


def test_no_ceiling_no_change() -> None:
    # no limit enforced: an exact figure at the limit passes, and a run without the counters reads
    v = judge(run(200 * MIB, limit=None), parse_budget("rss=200MiB"))
    assert (v.ok, v.results[0].at_least, v.program_failed) == (True, False, False)
    bare = run(200 * MIB, limit=None)
    bare.environment = {}
    assert judge(bare, parse_budget("rss=200MiB")).ok


def test_one_run_of_several_killed_fails_the_median() -> None:
    runs = [run(150 * MIB, limit=200 * MIB), run(200 * MIB, kills=1), run(160 * MIB, limit=200 * MIB)]
    (rss,) = judge_runs(runs, parse_budget("rss=200MiB")).results
    assert (rss.status, rss.at_least) == ("fail", True)
    assert "(run 2 of 3)" in rss.note


def test_an_old_profile_killed_under_an_enforced_cgroup_limit() -> None:
    # written before the counters: exit.oom_killed and measurement.enforced are all there is
    p = run(200 * MIB, limit=None, exit=KILLED)
    p.environment = {
        "measurement": {"enforced": {"memory_bytes": 200 * MIB, "memory_by": "cgroup and watchdog"}}
    }
    (rss,) = judge(p, parse_budget("rss=200MiB")).results
    assert (rss.status, rss.at_least) == ("fail", True)
