"""Verdicts over hand-built profiles (the measurement injected): exact figures, blame, program
status, medians of repeats and baselines, and the renderers (the terminal's and Markdown's, both
the report document's; JSON; Bencher's BMF)."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest

from memgauge.gate import (
    Blame,
    CheckResult,
    Limit,
    Verdict,
    bencher_bmf,
    format_amount,
    judge,
    judge_baseline,
    judge_runs,
    measure,
    parse_budget,
    result_line,
    verdict_json,
)
from memgauge.model._profile import (
    Attribution,
    CpuTimes,
    ExitStatus,
    LineStats,
    Peak,
    PhaseRecord,
    Profile,
)
from memgauge.render import MarkdownVerdictRenderer, TerminalVerdictRenderer

MIB, GIB = 1 << 20, 1 << 30
MAIN, WORKER = 100, 200


def make(
    *,
    rss: int = 400 * MIB,
    wall: float = 10.0,
    user: float = 6.0,
    system: float = 1.0,
    at: float | None = 5.0,
    exit: ExitStatus | None = None,
    phases: list[PhaseRecord] | None = None,
    attribution: list[Attribution] | None = None,
    lines: list[LineStats] | None = None,
) -> Profile:
    return Profile(
        command=["python", "train.py"],
        exit=exit if exit is not None else ExitStatus(code=0),
        wall_seconds=wall,
        cpu=CpuTimes(user, system),
        peak=Peak(resident_bytes=rss, method="cgroup-v2", at_seconds=at, attribution=attribution or []),
        phases=phases or [],
        lines=lines or [],
    )


def phase(
    name: str,
    start: float,
    end: float,
    peak: int,
    *,
    pid: int = MAIN,
    depth: int = 0,
    parent: int | None = None,
    exact: bool = True,
) -> PhaseRecord:
    return PhaseRecord(name, pid, start, end, peak, depth=depth, parent=parent, peak_exact=exact)


def entry(
    file: str, line: int, size: int, *, pid: int = MAIN, function: str = "f", source: str = ""
) -> Attribution:
    return Attribution(pid, file, line, function, size, source=source)


def only(verdict: Verdict) -> CheckResult:
    assert len(verdict.results) == 1
    return verdict.results[0]


# --- pass / fail / unmeasured --------------------------------------------------------------------


def test_whole_run_figures() -> None:
    p = make(rss=400 * MIB, wall=10.0, user=6.0, system=1.5)
    assert measure(p, "rss") == (400.0 * MIB, "")
    assert measure(p, "wall") == (10.0, "")
    assert measure(p, "cpu") == (7.5, "")
    assert measure(p, "gpu") == (
        None,
        "no GPU figure in this profile (no GPU used by the run)",
    )
    with pytest.raises(ValueError, match="unknown metric 'mem'"):
        measure(p, "mem")


@pytest.mark.parametrize(
    ("spec", "status", "margin"),
    [
        ("rss=500MiB", "pass", 100.0 * MIB),
        ("rss=400MiB", "pass", 0.0),  # exactly the limit: within it
        ("rss=419430399B", "fail", -1.0),  # one byte under the peak
        ("wall=10s", "pass", 0.0),
        ("wall=9.5s", "fail", -0.5),
        ("cpu=7.5s", "pass", 0.0),
        ("cpu=7s", "fail", -0.5),
    ],
)
def test_pass_fail_and_equal(spec: str, status: str, margin: float) -> None:
    r = only(judge(make(rss=400 * MIB, wall=10.0, user=6.0, system=1.5), parse_budget(spec)))
    assert r.status == status
    assert r.margin == pytest.approx(margin)
    assert r.limit.text == spec
    assert (r.blame is None) == (status == "pass")


def test_gpu_is_unmeasured_never_fails_and_never_passes_unless_allowed() -> None:
    v = judge(make(), parse_budget("gpu=1B fit.gpu=1B"))
    assert [(r.status, r.measured, r.margin) for r in v.results] == [("unmeasured", None, None)] * 2
    assert v.results[0].note == "no GPU figure in this profile (no GPU used by the run)"
    # a gate that could not look does not say yes
    assert (v.ok, v.failed, v.unjudged) == (False, (), True)
    assert (
        result_line(v) == "NOT JUDGED: 2 of 2 limits could not be measured; --allow-unmeasured accepts that"
    )
    allowed = judge(make(), parse_budget("gpu=1B fit.gpu=1B"), allow_unmeasured=True)
    assert (allowed.ok, allowed.unjudged) == (True, False)
    assert result_line(allowed) == "within budget (2 not measured, allowed)"


def test_a_breach_beside_an_unmeasured_limit_is_over_budget() -> None:
    v = judge(make(rss=400 * MIB), parse_budget("rss=300MiB gpu=1B"))
    assert (v.ok, len(v.failed), v.unjudged) == (False, 1, False)
    assert result_line(v) == "OVER BUDGET: 1 of 2 limits (1 not measured)"


def test_phase_limits_over_repeated_names_and_processes() -> None:
    phases = [
        phase("load", 0.0, 1.0, 100 * MIB),
        phase("fit", 1.0, 4.0, 300 * MIB),
        phase("fit", 4.0, 6.5, 350 * MIB),
        phase("fit", 2.0, 3.0, 320 * MIB, pid=WORKER),
    ]
    p = make(phases=phases)
    # the highest peak among the records of the name, in any process
    assert measure(p, "rss", "fit") == (350.0 * MIB, "")
    # the summed duration of the records (as the report's phase table sums them)
    assert measure(p, "wall", "fit") == (6.5, "")
    assert measure(p, "cpu", "fit") == (None, "CPU time is not recorded per phase")
    assert measure(p, "rss", "eval") == (None, "phase 'eval' did not run")
    v = judge(p, parse_budget("fit.rss=350MiB fit.wall=6s fit.cpu=1s eval.rss=1B load.wall=1s"))
    assert [(r.limit.key, r.status, r.measured) for r in v.results] == [
        ("fit.rss", "pass", 350.0 * MIB),
        ("fit.wall", "fail", 6.5),
        ("fit.cpu", "unmeasured", None),
        ("eval.rss", "unmeasured", None),
        ("load.wall", "pass", 1.0),
    ]
    assert v.results[3].note == "phase 'eval' did not run"
    assert not v.ok


def test_a_phase_peak_that_is_not_exact_is_a_lower_bound() -> None:
    p = make(phases=[phase("fit", 0.0, 1.0, 300 * MIB), phase("fit", 1.0, 2.0, 200 * MIB, exact=False)])
    r = only(judge(p, parse_budget("fit.rss=1GiB")))
    assert (r.status, r.note) == ("pass", "a lower bound: the phase's peak is not exact")
    # a lower bound over the limit is over it for sure
    assert only(judge(p, parse_budget("fit.rss=250MiB"))).status == "fail"


def test_a_whole_run_peak_within_its_error_bound_of_the_limit_says_so() -> None:
    p = make(rss=400 * MIB)
    p.peak.error_bound_bytes = 2 * MIB
    p.peak.method = "sampled tree sum"
    near = "within the peak's error bound (2.0 MiB, sampled tree sum)"
    assert only(judge(p, parse_budget("rss=401MiB"))).note == near
    assert only(judge(p, parse_budget("rss=399MiB"))).note == near
    assert only(judge(p, parse_budget("rss=403MiB"))).note == ""
    assert only(judge(p, parse_budget("rss=401MiB"))).status == "pass"  # judged by the figure measured
    p.peak.error_bound_bytes = 0
    assert only(judge(p, parse_budget("rss=401MiB"))).note == ""


def test_empty_budget_is_within() -> None:
    v = judge(make(), parse_budget(""))
    assert v.results == ()
    assert v.ok
    assert result_line(v) == "no limits to check"


# --- blame ---------------------------------------------------------------------------------------


def test_rss_blame_real_line_and_innermost_phase() -> None:
    phases = [
        phase("train", 0.0, 9.0, 500 * MIB),
        phase("fit", 1.0, 8.0, 500 * MIB, depth=1, parent=0),
        phase("step", 4.0, 6.0, 500 * MIB, depth=2, parent=1),
        phase("step", 6.0, 7.0, 500 * MIB, depth=2, parent=1),
        phase("io", 4.5, 5.5, 100 * MIB, pid=WORKER, depth=3),  # deeper, but another process
    ]
    attribution = [
        entry("<startup>", 0, 900 * MIB, function="interpreter start-up"),  # a pseudo-line, larger
        entry("/proj/train.py", 42, 300 * MIB, function="fit", source="x = np.ones(n)"),
        entry("/proj/train.py", 50, 350 * MIB, function="fit", source="y = x * 2"),
    ]
    r = only(
        judge(make(rss=600 * MIB, at=5.0, phases=phases, attribution=attribution), parse_budget("rss=500MiB"))
    )
    assert r.status == "fail"
    assert r.blame == Blame("step", MAIN, "/proj/train.py", 50, "fit", "y = x * 2", 350 * MIB)


def test_rss_blame_phase_in_another_process_when_the_lines_has_none_open() -> None:
    phases = [phase("io", 4.0, 6.0, 100 * MIB, pid=WORKER), phase("later", 6.0, 9.0, 1 * MIB)]
    attribution = [entry("/proj/a.py", 1, 10 * MIB, pid=MAIN)]
    r = only(judge(make(at=5.0, phases=phases, attribution=attribution), parse_budget("rss=1MiB")))
    assert r.blame == Blame("io", MAIN, "/proj/a.py", 1, "f", "", 10 * MIB)


def test_rss_blame_pseudo_line_only_when_no_real_one() -> None:
    attribution = [entry("<inherited>", 0, 5 * MIB, pid=WORKER), entry("<startup>", 0, 9 * MIB, pid=WORKER)]
    r = only(judge(make(attribution=attribution), parse_budget("rss=1MiB")))
    assert r.blame is not None
    assert (r.blame.file, r.blame.bytes, r.blame.pid) == ("<startup>", 9 * MIB, WORKER)


def test_rss_blame_without_attribution_or_moment() -> None:
    phases = [phase("fit", 0.0, 10.0, 1 * MIB)]
    r = only(judge(make(at=None, phases=phases), parse_budget("rss=1MiB")))
    assert r.blame == Blame()
    r = only(judge(make(at=5.0, phases=phases), parse_budget("rss=1MiB")))
    assert r.blame == Blame(phase="fit", pid=MAIN)


def test_phase_rss_blame_names_the_line_only_when_the_peak_is_inside_the_phase() -> None:
    phases = [
        phase("load", 0.0, 2.0, 200 * MIB),
        phase("fit", 2.0, 4.0, 700 * MIB, pid=WORKER),
        phase("fit", 4.0, 8.0, 600 * MIB),
    ]
    attribution = [entry("/proj/w.py", 3, 400 * MIB, pid=WORKER), entry("/proj/m.py", 7, 300 * MIB)]
    budget = parse_budget("fit.rss=500MiB load.rss=100MiB")
    v = judge(make(at=5.0, phases=phases, attribution=attribution), budget)
    fit, load = v.results
    # the peak (t=5) is inside MAIN's fit record: MAIN's line, though WORKER's is larger
    assert fit.blame == Blame("fit", MAIN, "/proj/m.py", 7, "f", "", 300 * MIB)
    # the peak is outside every load record: the tree's peak says nothing of load's lines
    assert load.blame == Blame(phase="load", pid=MAIN)
    # peak inside no record of fit: the phase, with the pid of its highest record
    v = judge(make(at=9.0, phases=phases, attribution=attribution), budget)
    assert v.results[0].blame == Blame(phase="fit", pid=WORKER)


def test_wall_blame_phase_with_most_own_time_and_busiest_own_line() -> None:
    phases = [
        phase("main", 0.0, 10.0, 1),  # the longest, but all of it is in the phases inside
        phase("load", 0.0, 3.0, 1, depth=1, parent=0),
        phase("fit", 3.0, 10.0, 1, depth=1, parent=0),
        phase("step", 3.0, 5.0, 1, depth=2, parent=2),
        phase("step", 5.0, 7.0, 1, depth=2, parent=2),
        phase("step", 7.0, 9.0, 1, depth=2, parent=2),
    ]
    lines = [
        LineStats(MAIN, "/usr/lib/python3.11/threading.py", 300, "wait", wait_seconds=9.0),
        LineStats(
            MAIN, "/proj/train.py", 10, "step", cpu_python_seconds=1.0, wait_seconds=3.0, source="sleep()"
        ),
        LineStats(MAIN, "/proj/train.py", 20, "step", cpu_native_seconds=2.5, source="np.dot(a, b)"),
    ]
    p = make(wall=10.0, user=6.0, system=1.0, phases=phases, lines=lines)
    wall, cpu = judge(p, parse_budget("wall=1s cpu=1s")).results
    # own time: main 0, load 3, fit 7 - 6 = 1, step 6: step; the program's line with the most time
    assert wall.blame == Blame("step", MAIN, "/proj/train.py", 10, "step", "sleep()", seconds=4.0)
    # cpu: the line with the most CPU time (waiting is not CPU)
    assert cpu.blame == Blame("step", MAIN, "/proj/train.py", 20, "step", "np.dot(a, b)", seconds=2.5)


def test_wall_blame_library_line_when_the_program_has_none() -> None:
    lines = [LineStats(MAIN, "/usr/lib/python3.11/threading.py", 300, "wait", wait_seconds=9.0)]
    r = only(judge(make(lines=lines), parse_budget("wall=1s")))
    assert r.blame == Blame(None, MAIN, "/usr/lib/python3.11/threading.py", 300, "wait", "", seconds=9.0)
    r = only(judge(make(), parse_budget("wall=1s")))
    assert r.blame == Blame()


def test_phase_wall_blame_is_the_phase_and_its_longest_record() -> None:
    phases = [phase("fit", 0.0, 1.0, 1), phase("fit", 1.0, 4.0, 1, pid=WORKER)]
    r = only(judge(make(phases=phases), parse_budget("fit.wall=1s")))
    assert r.blame == Blame(phase="fit", pid=WORKER)


# --- how the program ended -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "failed", "text"),
    [
        (ExitStatus(code=0), False, "exit 0"),
        (ExitStatus(code=1), True, "exit 1"),
        (ExitStatus(code=None, signal=9, signal_name="SIGKILL"), True, "killed by SIGKILL"),
        (
            ExitStatus(code=None, signal=9, signal_name="SIGKILL", oom_killed=True),
            True,
            "killed by the OOM killer",
        ),
        (ExitStatus(code=None), False, "in-process"),
    ],
)
def test_program_status(status: ExitStatus, failed: bool, text: str) -> None:
    v = judge(make(exit=status), parse_budget("rss=1GiB"))
    assert (v.ok, v.program_failed, v.program_status) == (True, failed, text)


def test_failed_program_over_budget_says_both() -> None:
    v = judge(make(exit=ExitStatus(code=3)), parse_budget("rss=1MiB"))
    assert not v.ok
    assert v.program_failed
    assert result_line(v) == "OVER BUDGET: 1 of 1 limit; the program failed too (exit 3)"
    v = judge(make(exit=ExitStatus(code=3)), parse_budget("rss=1GiB"))
    assert result_line(v) == "the program failed (exit 3)"


def test_stopped_by_an_enforced_limit_fails_that_limit_even_at_the_limit() -> None:
    # the cgroup stops the program at the limit: its peak is the limit, which alone would pass
    stopped = ExitStatus(
        code=None,
        signal=9,
        signal_name="SIGKILL",
        oom_killed=True,
        stopped_by="rss reached the limit 1.0 GiB (cgroup)",
    )
    attribution = [entry("/proj/grow.py", 14, 900 * MIB, source="held.append(b'x' * STEP)")]
    v = judge(make(rss=GIB, exit=stopped, attribution=attribution), parse_budget("rss=1GiB wall=1h"))
    rss, wall = v.results
    assert rss.status == "fail"
    assert rss.measured == GIB
    assert rss.note == "stopped by --enforce: rss reached the limit 1.0 GiB (cgroup)"
    assert rss.blame is not None and rss.blame.line == 14
    assert wall.status == "pass"
    # a breach, not a failure of the program
    assert (v.ok, v.program_failed) == (False, False)
    assert v.program_status == "stopped by memgauge: rss reached the limit 1.0 GiB (cgroup)"


@pytest.mark.parametrize(
    ("reason", "metric"),
    [
        ("wall time crossed the limit 2.00 s (watchdog)", "wall"),
        ("CPU time 3.00 s crossed the limit 2.00 s (watchdog)", "cpu"),
    ],
)
def test_stopped_by_time_limits(reason: str, metric: str) -> None:
    stopped = ExitStatus(code=None, signal=9, signal_name="SIGKILL", stopped_by=reason)
    v = judge(make(wall=2.0, user=1.0, system=0.5, exit=stopped), parse_budget(f"rss=1GiB {metric}=2s"))
    assert [r.status for r in v.results] == ["pass", "fail"]
    assert not v.program_failed


def test_stopped_by_a_limit_the_budget_does_not_hold_is_a_failed_program() -> None:
    stopped = ExitStatus(
        code=None, signal=9, signal_name="SIGKILL", stopped_by="wall time crossed the limit 1.00 s"
    )
    v = judge(make(), parse_budget("rss=1GiB"))
    assert v.ok and not v.program_failed
    v = judge(make(exit=stopped), parse_budget("rss=1GiB fit.wall=1s"))
    # no limit failed (fit.wall: the phase never ran, unmeasured); the program did
    assert not v.failed
    assert v.program_failed
    assert v.program_status == "stopped by memgauge: wall time crossed the limit 1.00 s"


# --- medians of repeats --------------------------------------------------------------------------


def test_judge_runs_median_odd_with_blame_from_the_median_run() -> None:
    runs = [
        make(rss=300 * MIB, attribution=[entry("/a.py", 1, 1)]),
        make(rss=900 * MIB, attribution=[entry("/a.py", 2, 2)]),
        make(rss=600 * MIB, attribution=[entry("/a.py", 3, 3)]),
    ]
    v = judge_runs(runs, parse_budget("rss=500MiB"))
    r = only(v)
    assert (r.measured, r.status) == (600.0 * MIB, "fail")
    assert r.blame is not None and r.blame.line == 3
    assert v.runs == 3
    assert result_line(v) == "OVER BUDGET: 1 of 1 limit (medians of 3 runs)"


def test_judge_runs_median_even_blames_the_lower_middle_run() -> None:
    runs = [
        make(wall=w, lines=[LineStats(MAIN, "/a.py", int(w), "f", wait_seconds=w)])
        for w in (4.0, 1.0, 3.0, 10.0)
    ]
    r = only(judge_runs(runs, parse_budget("wall=2s")))
    assert (r.measured, r.status) == (3.5, "fail")
    assert r.blame is not None and r.blame.line == 3  # the run of 3 s, the lower of 3 and 4


def test_judge_runs_phase_in_some_runs_only() -> None:
    runs = [
        make(phases=[phase("fit", 0.0, 1.0, 100 * MIB)]),
        make(),
        make(phases=[phase("fit", 0.0, 1.0, 300 * MIB)]),
    ]
    r = only(judge_runs(runs, parse_budget("fit.rss=150MiB")))
    assert (r.measured, r.status) == (200.0 * MIB, "fail")
    assert r.note == "phase 'fit' ran in 2 of 3 runs"
    r = only(judge_runs([make(), make()], parse_budget("fit.rss=150MiB")))
    assert (r.status, r.note) == ("unmeasured", "phase 'fit' did not run")


def test_judge_runs_program_status_names_the_run() -> None:
    v = judge_runs(
        [make(), make(exit=ExitStatus(code=2)), make(exit=ExitStatus(code=5))], parse_budget("rss=1GiB")
    )
    assert (v.program_failed, v.program_status) == (True, "exit 2 (run 2 of 3)")
    with pytest.raises(ValueError):
        judge_runs([], parse_budget("rss=1GiB"))


def test_judge_is_judge_runs_of_one() -> None:
    p = make(phases=[phase("fit", 0.0, 1.0, 100 * MIB)])
    b = parse_budget("rss=1MiB wall=1s fit.rss=1MiB")
    assert judge(p, b) == judge_runs([p], b)


# --- baselines -----------------------------------------------------------------------------------


def test_baseline_medians_and_separate_tolerances() -> None:
    baselines = [
        make(rss=400 * MIB, wall=8.0, user=4.0, system=0.0),
        make(rss=420 * MIB, wall=12.0, user=6.0, system=0.0),
        make(rss=380 * MIB, wall=10.0, user=5.0, system=0.0),
    ]
    runs = [
        make(rss=440 * MIB, wall=12.5, user=6.25, system=0.0),
        make(rss=441 * MIB, wall=13.0, user=9.0, system=0.0),
    ]
    v = judge_baseline(runs, baselines, max_memory_increase=0.10, max_time_increase=0.25)
    assert (v.runs, v.baselines) == (2, 3)
    rows = [(r.limit.key, r.baseline, r.limit.value, r.measured, r.status, r.limit.text) for r in v.results]
    assert rows == [
        # median 400 MiB + 10% = 440 MiB; the runs' median 440.5 MiB
        ("rss", 400.0 * MIB, 440.0 * MIB, 440.5 * MIB, "fail", "rss <= baseline 400 MiB + 10%"),
        # median 10 s + 25% = 12.5 s; the runs' median 12.75 s
        ("wall", 10.0, 12.5, 12.75, "fail", "wall <= baseline 10.00 s + 25%"),
        # median 5 s + 25% = 6.25 s; the runs' median 7.625 s
        ("cpu", 5.0, 6.25, 7.625, "fail", "cpu <= baseline 5.00 s + 25%"),
    ]


def test_baseline_exactly_at_the_tolerance_passes() -> None:
    # 0.07 is not exact in binary: 1000 * 1.07 is 1070.0000000000002, or 1069.99... for others
    v = judge_baseline(
        [make(rss=1070, wall=10.7)],
        [make(rss=1000, wall=10.0)],
        max_memory_increase=0.07,
        max_time_increase=0.07,
    )
    assert [(r.limit.value, r.status) for r in v.results[:2]] == [(1070.0, "pass"), (10.7, "pass")]


def test_baseline_tolerance_none_skips_that_kind() -> None:
    runs, base = [make(rss=2 * GIB, wall=100.0)], [make()]
    v = judge_baseline(runs, base, max_memory_increase=None, max_time_increase=0.5)
    assert [r.limit.key for r in v.results] == ["wall", "cpu"]
    v = judge_baseline(runs, base, max_memory_increase=0.5, max_time_increase=None)
    assert [(r.limit.key, r.status) for r in v.results] == [("rss", "fail")]
    v = judge_baseline(runs, base, max_memory_increase=None, max_time_increase=None)
    assert v.results == ()
    with pytest.raises(ValueError):
        judge_baseline(runs, base, max_memory_increase=-0.1, max_time_increase=None)
    with pytest.raises(ValueError):
        judge_baseline([], base, max_memory_increase=0.1, max_time_increase=None)


def test_baseline_phases_present_on_both_sides() -> None:
    base = [make(phases=[phase("load", 0.0, 1.0, 100 * MIB), phase("fit", 1.0, 5.0, 200 * MIB)])]
    runs = [
        make(
            phases=[
                phase("fit", 1.0, 5.5, 260 * MIB),
                phase("eval", 6.0, 7.0, 1 * MIB),
                phase("fit", 0.0, 0.5, 10 * MIB, pid=WORKER),
            ]
        )
    ]
    v = judge_baseline(runs, base, max_memory_increase=0.25, max_time_increase=0.25)
    rows = [(r.limit.key, r.limit.value, r.measured, r.status) for r in v.results]
    assert rows[3:] == [("fit.rss", 250.0 * MIB, 260.0 * MIB, "fail"), ("fit.wall", 5.0, 5.0, "pass")]
    assert v.results[3].limit.text == "fit.rss <= baseline 200 MiB + 25%"
    assert v.results[3].blame == Blame(phase="fit", pid=MAIN)


def test_baseline_blame_comes_from_the_median_run() -> None:
    runs = [make(rss=r * MIB, attribution=[entry("/a.py", r, r * MIB)]) for r in (700, 500, 900, 600)]
    v = judge_baseline(runs, [make(rss=100 * MIB)], max_memory_increase=0.0, max_time_increase=None)
    r = only(v)
    assert r.measured == 650.0 * MIB
    assert r.blame is not None and r.blame.line == 600  # the lower of the middle two
    assert r.limit.text == "rss <= baseline 100 MiB + 0%"


def test_baseline_program_status_is_the_runs() -> None:
    v = judge_baseline(
        [make(exit=ExitStatus(code=1))],
        [make(exit=ExitStatus(code=7))],
        max_memory_increase=0.1,
        max_time_increase=0.1,
    )
    assert (v.program_failed, v.program_status) == (True, "exit 1")
    stopped = ExitStatus(
        code=None, signal=9, signal_name="SIGKILL", stopped_by="rss 1.1 GiB crossed the limit 1.0 GiB"
    )
    v = judge_baseline([make(exit=stopped)], [make()], max_memory_increase=0.1, max_time_increase=0.1)
    # no budget limit stopped it here: the run is incomplete, a failure
    assert v.program_failed


# --- JSON ----------------------------------------------------------------------------------------


def _sample_verdict() -> Verdict:
    phases = [phase("fit", 1.0, 8.0, 700 * MIB)]
    attribution = [entry("/proj/train.py", 42, 600 * MIB, function="fit", source="X = np.zeros((n, n))")]
    p = make(rss=730 * MIB, wall=12.3, user=10.0, system=1.0, at=5.0, phases=phases, attribution=attribution)
    return judge(p, parse_budget("rss=512MiB wall=60s fit.rss=1GiB gpu=2GiB eval.wall=1s"))


def test_to_dict_is_json_without_nan() -> None:
    v = _sample_verdict()
    data = json.loads(json.dumps(v.to_dict(), allow_nan=False))
    assert {k: data[k] for k in ("ok", "program_failed", "program_status", "runs", "limits", "failed")} == {
        "ok": False,
        "program_failed": False,
        "program_status": "exit 0",
        "runs": 1,
        "limits": 5,
        "failed": 1,
    }
    assert (data["unmeasured"], data["allow_unmeasured"]) == (2, False)
    rss = data["results"][0]
    assert rss == {
        "key": "rss",
        "metric": "rss",
        "phase": None,
        "unit": "bytes",
        "limit": 512 * MIB,
        "text": "rss=512MiB",
        "measured": 730 * MIB,
        "margin": -218 * MIB,
        "status": "fail",
        "note": "",
        "baseline": None,
        "blame": {
            "phase": "fit",
            "pid": MAIN,
            "file": "/proj/train.py",
            "line": 42,
            "function": "fit",
            "source": "X = np.zeros((n, n))",
            "bytes": 600 * MIB,
            "seconds": None,
        },
        "at_least": False,
    }
    # bytes are whole numbers in the JSON, seconds are floats
    assert isinstance(rss["limit"], int) and isinstance(rss["measured"], int)
    wall = data["results"][1]
    assert (wall["limit"], wall["measured"], wall["margin"], wall["status"]) == (60.0, 12.3, 47.7, "pass")
    gpu = data["results"][3]
    assert (gpu["measured"], gpu["margin"], gpu["status"]) == (None, None, "unmeasured")
    assert data["results"][2]["key"] == "fit.rss"
    assert data["results"][2]["phase"] == "fit"


def test_verdict_json_adds_the_result_line() -> None:
    v = _sample_verdict()
    data = verdict_json(v)
    assert data["result"] == "OVER BUDGET: 1 of 5 limits (2 not measured)"
    json.dumps(data, allow_nan=False)
    # a baseline verdict: the baseline and a median that is half a byte are plain numbers too
    bv = judge_baseline(
        [make(rss=1), make(rss=2)], [make(rss=1)], max_memory_increase=0.0, max_time_increase=0.0
    )
    data = json.loads(json.dumps(verdict_json(bv), allow_nan=False))
    assert (data["results"][0]["measured"], data["results"][0]["baseline"]) == (1.5, 1)


def test_from_dict_reads_the_json_back_into_the_same_records() -> None:
    bv = judge_baseline(
        [make(rss=1, wall=2.5), make(rss=2, wall=3.5)],
        [make(rss=1, wall=3.0)],
        max_memory_increase=0.0,
        max_time_increase=0.1,
    )
    failed = judge(make(exit=ExitStatus(code=3)), parse_budget("rss=1MiB cpu=1s gpu=1GiB"))
    allowed = judge(make(), parse_budget("gpu=1GiB"), allow_unmeasured=True)
    for v in (_sample_verdict(), bv, failed, Verdict(()), allowed):
        stored = json.loads(json.dumps(verdict_json(v), allow_nan=False))
        back = Verdict.from_dict(stored)
        assert back == v
        # every figure typed as the judge made it: floats, not the JSON's whole numbers
        assert all(isinstance(r.limit.value, float) for r in back.results)
        assert all(r.measured is None or isinstance(r.measured, float) for r in back.results)
        assert verdict_json(back) == stored
        assert verdict_text(back, cwd="/proj") == verdict_text(v, cwd="/proj")
        for r, entry_ in zip(v.results, stored["results"], strict=True):
            assert CheckResult.from_dict(entry_) == r
    assert failed.program_failed and Verdict.from_dict(verdict_json(failed)).program_status == "exit 3"


def test_from_dict_fills_what_is_missing_and_refuses_what_is_wrong() -> None:
    least = {"metric": "rss", "limit": 1024, "status": "pass", "measured": 10}
    assert CheckResult.from_dict(least) == CheckResult(Limit("rss", 1024.0), 10.0, "pass")
    assert Verdict.from_dict({"results": [least]}) == Verdict(
        (CheckResult(Limit("rss", 1024.0), 10.0, "pass"),)
    )
    assert Blame.from_dict({"line": 3}) == Blame(line=3)
    bad: list[tuple[Any, str]] = [
        ([], "verdict is not an object"),
        ({}, "no 'results'"),
        ({"results": [{"metric": "rss", "status": "pass"}]}, "no 'limit'"),
        ({"results": {}}, "'results' is not a list"),
        ({"results": [], "program_failed": "no"}, "'program_failed' is not true or false"),
        ({"results": [], "runs": 1.5}, "'runs' is not a whole number"),
        ({"results": [1]}, "a result is not an object"),
        ({"results": [{**least, "metric": "mem"}]}, "unknown metric 'mem'"),
        ({"results": [{**least, "key": "rss", "status": "ok"}]}, "the result of 'rss': unknown status 'ok'"),
        ({"results": [{**least, "limit": "1MiB"}]}, "'limit' is not a number"),
        ({"results": [{**least, "limit": True}]}, "'limit' is not a number"),
        ({"results": [{**least, "note": None}]}, "'note' is not a string"),
        ({"results": [{**least, "blame": {"line": "3"}}]}, "blame: 'line' is not a whole number"),
        ({"results": [{**least, "blame": []}]}, "blame is not an object"),
    ]
    for data, message in bad:
        with pytest.raises(ValueError, match=re.escape(message)):
            Verdict.from_dict(data)


@pytest.mark.parametrize(
    ("value", "unit", "signed", "text"),
    [
        (512 * MIB, "bytes", False, "512 MiB"),
        (-218 * MIB, "bytes", True, "-218 MiB"),
        (324 * MIB, "bytes", True, "+324 MiB"),
        (1.5, "seconds", False, "1.50 s"),
        (47.7, "seconds", True, "+47.70 s"),
        (-0.5, "seconds", True, "-500 ms"),
        (0.0, "seconds", True, "0 µs"),
    ],
)
def test_format_amount(value: float, unit: str, signed: bool, text: str) -> None:
    assert format_amount(value, unit, signed=signed) == text


def test_format_amount_refuses_an_unknown_unit() -> None:
    with pytest.raises(ValueError, match="unknown unit 'rss'"):
        format_amount(1.0, "rss")


# --- text ----------------------------------------------------------------------------------------


def verdict_text(verdict: Verdict, *, width: int = 100, cwd: str | None = None) -> str:
    """The verdict as ``memgauge check`` prints it."""
    return TerminalVerdictRenderer(width=width, cwd=cwd).render(verdict)


def test_verdict_text_table() -> None:
    text = verdict_text(_sample_verdict(), width=140, cwd="/proj")
    assert text == (
        "limit         budget  measured    margin  status\n"
        "rss          512 MiB   730 MiB  -218 MiB  FAIL\n"
        "wall       1 min 0 s   12.30 s  +47.70 s  pass\n"
        "fit.rss      1.0 GiB   700 MiB  +324 MiB  pass\n"
        "gpu          2.0 GiB         —         —  unmeasured\n"
        "eval.wall     1.00 s         —         —  unmeasured\n"
        "  rss: at phase 'fit' · pid 100 · train.py:42 in fit · 600 MiB at the peak · X = np.zeros((n, n))\n"
        "  gpu: no GPU figure in this profile (no GPU used by the run)\n"
        "  eval.wall: phase 'eval' did not run\n"
        "OVER BUDGET: 1 of 5 limits (2 not measured)\n"
    )


def test_verdict_text_narrow_wraps_the_notes_and_leaves_out_the_margin_then_the_budget() -> None:
    lines = verdict_text(_sample_verdict(), width=60, cwd="/proj").splitlines()
    assert all(len(line) <= 60 for line in lines)
    assert lines[0] == "limit         budget  measured    margin  status"
    # a note wraps between its parts, under its key, a figure whole
    assert lines[6:11] == [
        "  rss: at phase 'fit' · pid 100 · train.py:42 in fit ·",
        "    600 MiB at the peak · X = np.zeros((n, n))",
        "  gpu: no GPU figure in this profile (no GPU used by the",
        "    run)",
        "  eval.wall: phase 'eval' did not run",
    ]
    # narrower, the margin goes, then the budget; the figure and the status stay
    header = verdict_text(_sample_verdict(), width=48).splitlines()[0]
    assert header == "limit         budget  measured  status"
    narrow = verdict_text(_sample_verdict(), width=40).splitlines()
    assert narrow[0] == "limit      measured  status" and narrow[1] == "rss         730 MiB  FAIL"
    assert all(len(line) <= 40 for line in narrow)


def test_verdict_text_colours_only_where_asked() -> None:
    plain = verdict_text(_sample_verdict(), cwd="/proj")
    assert "\x1b" not in plain
    coloured = TerminalVerdictRenderer(color=True, cwd="/proj").render(_sample_verdict())
    assert "\x1b[1;31mOVER BUDGET: 1 of 5 limits (2 not measured)\x1b[0m" in coloured
    assert "\x1b[36mtrain.py:42\x1b[0m in fit" in coloured


def test_verdict_text_escapes_control_characters_of_the_program() -> None:
    attribution = [entry("/proj/a\x1b[2Jb.py", 1, 5 * MIB, source="x = '\x1b[31mred'\t# tab")]
    v = judge(make(attribution=attribution), parse_budget("rss=1MiB"))
    for text in (verdict_text(v, cwd="/proj"), MarkdownVerdictRenderer(cwd="/proj").render(v)):
        assert "\x1b" not in text
        assert "a\\x1b[2Jb.py:1" in text and " in f" in text
        assert "x = '\\x1b[31mred'\\t# tab" in text


def test_verdict_text_baseline_rows_show_the_allowance_and_the_change() -> None:
    v = judge_baseline(
        [make(rss=440 * MIB, wall=9.0)],
        [make(rss=400 * MIB, wall=10.0)],
        max_memory_increase=0.05,
        max_time_increase=None,
    )
    assert verdict_text(v) == (
        "limit   budget  measured     margin  status\n"
        "rss    420 MiB   440 MiB  -20.0 MiB  FAIL\n"
        "  rss: baseline 400 MiB + 5% (+10.0%)\n"
        "OVER BUDGET: 1 of 1 limit\n"
    )


def test_verdict_markdown_is_the_same_table_notes_and_line() -> None:
    assert MarkdownVerdictRenderer(cwd="/proj").render(_sample_verdict()) == (
        "| limit | budget | measured | margin | status |\n"
        "| :--- | ---: | ---: | ---: | :--- |\n"
        "| rss | 512 MiB | 730 MiB | -218 MiB | FAIL |\n"
        "| wall | 1 min 0 s | 12.30 s | +47.70 s | pass |\n"
        "| fit.rss | 1.0 GiB | 700 MiB | +324 MiB | pass |\n"
        "| gpu | 2.0 GiB | — | — | unmeasured |\n"
        "| eval.wall | 1.00 s | — | — | unmeasured |\n"
        "\n"
        "- rss: at phase 'fit' · pid 100 · `train.py:42` in fit · 600 MiB at the peak · "
        "`X = np.zeros((n, n))`\n"
        "- gpu: no GPU figure in this profile (no GPU used by the run)\n"
        "- eval.wall: phase 'eval' did not run\n"
        "\n"
        "**OVER BUDGET: 1 of 5 limits (2 not measured)**\n"
    )
    # a verdict with nothing to judge: its line alone, in no tone
    assert MarkdownVerdictRenderer().render(Verdict(())) == "no limits to check\n"
    assert verdict_text(Verdict(())) == "no limits to check\n"


@pytest.mark.parametrize(
    ("verdict", "line"),
    [
        (Verdict(()), "no limits to check"),
        (Verdict((CheckResult(Limit("rss", 1.0), 1.0, "pass"),)), "within budget"),
        (
            Verdict((CheckResult(Limit("rss", 1.0), 1.0, "pass"),), runs=5),
            "within budget (medians of 5 runs)",
        ),
        (
            Verdict((CheckResult(Limit("gpu", 1.0), None, "unmeasured"),)),
            "NOT JUDGED: 1 of 1 limit could not be measured; --allow-unmeasured accepts that",
        ),
        (
            Verdict((CheckResult(Limit("gpu", 1.0), None, "unmeasured"),), allow_unmeasured=True),
            "within budget (1 not measured, allowed)",
        ),
        (
            Verdict(
                (
                    CheckResult(Limit("rss", 1.0), 2.0, "fail"),
                    CheckResult(Limit("wall", 1.0), 2.0, "fail"),
                    CheckResult(Limit("cpu", 1.0), 0.5, "pass"),
                )
            ),
            "OVER BUDGET: 2 of 3 limits",
        ),
        (
            Verdict((), program_failed=True, program_status="killed by SIGKILL"),
            "the program failed (killed by SIGKILL)",
        ),
    ],
)
def test_result_line(verdict: Verdict, line: str) -> None:
    assert result_line(verdict) == line


# --- Bencher Metric Format -----------------------------------------------------------------------

# https://bencher.dev/docs/reference/bencher-metric-format/ (the schema, as published)
BMF_SCHEMA: dict[str, Any] = {
    "type": "object",
    "patternProperties": {
        ".+": {
            "type": "object",
            "patternProperties": {
                ".+": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "number"},
                        "lower_value": {"type": "number"},
                        "upper_value": {"type": "number"},
                    },
                    "required": ["value"],
                }
            },
        }
    },
}


def test_bmf_one_profile() -> None:
    p = make(
        rss=400 * MIB,
        wall=10.0,
        user=6.0,
        system=1.5,
        phases=[
            phase("load", 0.0, 1.0, 100 * MIB),
            phase("fit", 1.0, 4.0, 300 * MIB),
            phase("fit", 4.0, 5.0, 350 * MIB),
        ],
    )
    bmf = bencher_bmf({"train": p})
    assert bmf == {
        "train": {
            "peak-rss-bytes": {"value": 400.0 * MIB},
            "wall-seconds": {"value": 10.0},
            "cpu-seconds": {"value": 7.5},
            "load.peak-rss-bytes": {"value": 100.0 * MIB},
            "load.wall-seconds": {"value": 1.0},
            "fit.peak-rss-bytes": {"value": 350.0 * MIB},
            "fit.wall-seconds": {"value": 4.0},
        }
    }
    jsonschema.validate(json.loads(json.dumps(bmf, allow_nan=False)), BMF_SCHEMA)


def test_bmf_repeats_median_min_max() -> None:
    runs = [
        make(rss=300, wall=3.0, phases=[phase("fit", 0.0, 1.0, 10)]),
        make(rss=100, wall=1.0),
        make(rss=200, wall=4.0, phases=[phase("fit", 0.0, 2.0, 30)]),
        make(rss=900, wall=2.0),
    ]
    bmf = bencher_bmf({"a": runs, "b": runs[1:2]})
    assert bmf["a"]["peak-rss-bytes"] == {"value": 250.0, "lower_value": 100.0, "upper_value": 900.0}
    assert bmf["a"]["wall-seconds"] == {"value": 2.5, "lower_value": 1.0, "upper_value": 4.0}
    # the phase over the runs it ran in
    assert bmf["a"]["fit.peak-rss-bytes"] == {"value": 20.0, "lower_value": 10.0, "upper_value": 30.0}
    assert bmf["b"] == {
        "peak-rss-bytes": {"value": 100.0},
        "wall-seconds": {"value": 1.0},
        "cpu-seconds": {"value": 7.0},
    }
    jsonschema.validate(bmf, BMF_SCHEMA)
    with pytest.raises(ValueError, match="no profile for the benchmark 'c'"):
        bencher_bmf({"c": []})


def test_bmf_measure_names_fit_bencher_limit() -> None:
    long_a, long_b = "x" * 80 + "a", "x" * 80 + "b"
    p = make(phases=[phase(long_a, 0.0, 1.0, 1), phase(long_b, 1.0, 2.0, 1)])
    names = list(bencher_bmf({"t": p})["t"])
    assert len(names) == 7
    assert all(len(n) <= 64 for n in names)
    assert len(set(names)) == 7
    assert names[3].endswith(".peak-rss-bytes") and names[3].startswith("xxxx")
