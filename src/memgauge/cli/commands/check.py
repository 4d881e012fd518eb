"""``memgauge check``: judge a run, or saved profiles, against budgets and baselines.

    memgauge check --policy edge-pc train.py                 # run it (N times with --repeat), judge
    memgauge check --budget rss=1GiB run.json                # judge saved profiles (medians if several)
    memgauge check --baseline main.json --max-increase 10% run.json
    memgauge check --budget rss=300MiB --prove train.py      # a pass verified under 300 MiB, cold

Exit status (stable; also in README.md): 0 within budget, 1 over budget (a limit crossed, or
stopped by ``--enforce``), 2 the program itself failed (non-zero exit or killed by a signal) while
within budget, 3 a limit could not be measured and none failed (``--allow-unmeasured`` makes that
a pass), and memgauge's own codes otherwise (64 usage, 65/66 bad or missing profile, ...).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

from memgauge._errors import UsageError
from memgauge._files import check_output, write_output
from memgauge.cli._common import (
    FAILED,
    OVER_BUDGET,
    PASSED,
    UNJUDGED,
    Program,
    load_profile,
    run_options,
    say,
)
from memgauge.cli._formats import FORMATS, RECORD_SUFFIX, Judged, Look, format_option, need
from memgauge.cli._parser import Parser
from memgauge.cli._run_plan import RunPlan
from memgauge.cli._spelling import renamed_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.gate import Budget, GateConfig, Verdict
    from memgauge.model import Profile
    from memgauge.runner import HardLimits, Target


class CheckCommand:
    name = "check"
    summary = "judge a run or a profile against budgets"
    usage: str | None = (
        "memgauge check [options] (PROFILE.json ... | script.py | -m module | -- command) [args ...]"
    )
    description = (
        "Judge a run, or saved profiles, against budgets (--budget, --policy, "
        "[tool.memgauge] in pyproject.toml or memgauge.toml) and baselines. Exit 0 within budget, "
        "1 over budget, 2 the program failed, 3 a limit could not be measured."
    )
    # saved profiles stand where a program would: both are what follows the options
    examples: tuple[str, ...] = (
        "memgauge check --budget 'rss=512MiB wall=60s' train.py  # run it and judge: exit 0, 1, 2 or 3",
        "memgauge check --budget rss=1GiB run-1.json run-2.json  # judge saved profiles (their medians)",
        "memgauge check --baseline main.json --max-increase 10% run.json  # no more than 10% over main",
    )
    program: Program = "target"

    def prepare_parser(self, parser: Parser) -> None:
        p = parser
        p.add_argument(
            "--budget",
            action="append",
            default=[],
            metavar="SPEC",
            help="limits, e.g. 'rss=512MiB wall=60s fit.rss=300MiB' (commas also separate; units B KB "
            "KiB MB MiB GB GiB; s ms min); repeatable; over the policy's limits",
        )
        p.add_argument("--policy", metavar="NAME", help="a named policy of the project's configuration")
        p.add_argument(
            "--allow-unmeasured",
            action="store_true",
            help="accept a limit this host could not measure (a gpu limit without a GPU, a phase that "
            "never ran): without it such a verdict exits 3, neither pass nor fail",
        )
        p.add_argument(
            "--enforce",
            action="store_true",
            help="stop the program as soon as a whole-run rss, wall or cpu limit is crossed (cgroup "
            "limit where one can be made, else a watchdog); the profile is still written; a gpu "
            "limit caps torch's allocator in the program (survived or out of memory)",
        )
        p.add_argument(
            "--prove",
            action="store_true",
            help="verify a pass: run the program again under the budget's whole-run rss as a hard "
            "limit in a fresh cgroup, its files evicted from page cache; OOM-killed there turns the "
            "pass into a fail (needs a cgroup)",
        )
        p.add_argument(
            "--baseline", action="append", default=[], metavar="PROFILE.json", help="baseline profile(s)"
        )
        p.add_argument("--max-increase", metavar="PCT", help="allowed increase over the baseline, e.g. 10%%")
        p.add_argument("--max-memory-increase", metavar="PCT", help="for memory only (over --max-increase)")
        p.add_argument("--max-time-increase", metavar="PCT", help="for time only (over --max-increase)")
        p.add_argument(
            "--repeat", type=int, default=1, metavar="N", help="run N times and judge the medians (default 1)"
        )
        format_option(
            p,
            "verdict",
            "terminal (default: the verdict's table), md (the same as Markdown, for a pull-request "
            "comment), json (the verdict), bmf (Bencher Metric Format, for dashboards)",
            default="terminal",
            # "text" was this option's spelling before every command said "terminal"
            type=renamed_value("--format", {"text": "terminal"}),
        )
        p.add_argument("-o", "--output", metavar="PATH", help="write the --format output to PATH")
        p.add_argument("--name", metavar="NAME", help="benchmark name in BMF output (default: the target)")
        run_options(p)

    def run(self, args: argparse.Namespace, program: list[str]) -> int:
        from memgauge.gate import load_config, resolve_budget

        if not program:
            raise UsageError("give a program to run or profiles to judge (see 'memgauge check --help')")
        if args.repeat < 1:
            raise UsageError("--repeat must be at least 1")
        config = load_config()
        budget = resolve_budget(config, policy=args.policy, budget_specs=args.budget)
        memory_tolerance, time_tolerance = _tolerances(args, config)
        if not budget and not args.baseline:
            raise UsageError(
                "nothing to check against: give --budget, --policy or --baseline, or a budget in "
                "[tool.memgauge] (pyproject.toml) or memgauge.toml"
            )
        if args.prove and budget.get("rss") is None:
            raise UsageError("--prove needs a whole-run rss limit to prove (e.g. --budget rss=300MiB)")
        if args.output:
            check_output(args.output, "verdict")
        baselines = [load_profile(path) for path in args.baseline]
        profile_mode = program[0].lower().endswith(".json") and program[0] not in ("-m", "--")
        plan = None
        if profile_mode:
            runs, name = _saved_runs(args, program)
        else:
            plan, runs = _program_runs(args, program, budget)
            name = args.name or plan.target.name
        verdict = _verdict(runs, baselines, budget, memory_tolerance, time_tolerance)
        verdict = dataclasses.replace(verdict, allow_unmeasured=args.allow_unmeasured)
        if plan is not None and args.prove and not verdict.failed and not verdict.program_failed:
            verdict = _prove(verdict, plan.target)
        _output(verdict, runs, name, args, stdout=profile_mode)
        if verdict.failed:
            return OVER_BUDGET
        if verdict.program_failed:
            return FAILED
        return UNJUDGED if verdict.unjudged else PASSED


def _tolerances(args: argparse.Namespace, config: GateConfig) -> tuple[float | None, float | None]:
    """The memory and time increases over the baseline allowed: each option, else --max-increase,
    else the configuration's; a usage error where they are given without a baseline or missing
    with one."""
    both = _fraction(args.max_increase, "--max-increase")
    memory = _fraction(args.max_memory_increase, "--max-memory-increase")
    time = _fraction(args.max_time_increase, "--max-time-increase")
    memory = memory if memory is not None else both
    time = time if time is not None else both
    if not args.baseline:
        if any(v is not None for v in (args.max_increase, args.max_memory_increase, args.max_time_increase)):
            raise UsageError("--max-increase needs --baseline")
        return memory, time
    memory = memory if memory is not None else config.max_memory_increase
    time = time if time is not None else config.max_time_increase
    if memory is None and time is None:
        raise UsageError("--baseline needs --max-increase (or --max-memory-increase / --max-time-increase)")
    return memory, time


def _saved_runs(args: argparse.Namespace, paths: list[str]) -> tuple[list[Profile], str]:
    """Saved profiles to judge, and the benchmark's name."""
    for given, why in (
        (args.enforce, "--enforce needs a program to run, not saved profiles"),
        (args.repeat != 1, "--repeat needs a program to run; give several profiles instead"),
        (args.prove, "--prove needs a program to run, not saved profiles"),
    ):
        if given:
            raise UsageError(why)
    return [load_profile(path) for path in paths], args.name or os.path.basename(paths[0]).removesuffix(
        ".json"
    )


def _program_runs(
    args: argparse.Namespace, program: list[str], budget: Budget
) -> tuple[RunPlan, list[Profile]]:
    """The program's plan, and its profiles, run --repeat times (one terminal report: the last)."""
    if args.format != "terminal" and not args.output:
        raise UsageError(f"--format {args.format} with a program needs -o PATH (its stdout is its own)")
    plan = RunPlan(args, program, enforce=_hard_limits(budget) if args.enforce else None)
    if args.enforce:
        _cap_gpu(plan, budget)
    runs = []
    for i in range(1, args.repeat + 1):
        if args.repeat > 1:
            say(f"memgauge check: run {i} of {args.repeat}\n")
        json_path = None if plan.json_path is None else _numbered(plan.json_path, i, args.repeat)
        runs.append(plan.run(json_path, report=i == args.repeat))
    return plan, runs


def _fraction(text: str | None, option: str) -> float | None:
    from memgauge.cli._values import percent_option

    return None if text is None else percent_option(text, option)


def _cap_gpu(plan: RunPlan, budget: Budget) -> None:
    """A gpu= limit under --enforce caps torch's reserve in the program (docs/gpu.md), through
    the program's environment (never memgauge's own: the next run in this process is uncapped)."""
    from memgauge._env import ENV_GPU_CAP

    limit = budget.get("gpu")
    if limit is not None:
        plan.options.env = {**(plan.options.env or os.environ), ENV_GPU_CAP: str(int(limit.value))}


def _hard_limits(budget: Budget) -> HardLimits | None:
    from memgauge.runner import HardLimits

    whole = {limit.metric: limit.value for limit in budget.limits if limit.phase is None}
    if not any(m in whole for m in ("rss", "wall", "cpu", "gpu")):
        raise UsageError(
            "--enforce needs a whole-run rss, wall, cpu or gpu limit (phase limits are judged after)"
        )
    if not any(m in whole for m in ("rss", "wall", "cpu")):
        return None  # gpu alone: enforced inside the program
    rss = whole.get("rss")
    return HardLimits(
        memory_bytes=None if rss is None else int(rss),
        wall_seconds=whole.get("wall"),
        cpu_seconds=whole.get("cpu"),
    )


def _prove(verdict: Verdict, target: Target) -> Verdict:
    """The pass verified by the kernel (issue 16): the program under the whole-run rss limit as a
    hard limit, caches cold, beside an unlimited cold run. No counter of one unlimited run says what
    a container needs; a run under the limit does. OOM-killed (or failing) there turns the rss
    result into a fail; either way the result's note carries the proof's figures (the runner's
    ``Proof`` and the gate's ``apply_proof``, which the service's ``prove`` policies use too)."""
    from memgauge._errors import LimitError
    from memgauge._units import format_bytes
    from memgauge.gate import apply_proof, proved_limit
    from memgauge.runner import Proof, prove_limit

    limit = proved_limit(verdict)
    if limit is None:  # the budget was checked for one before the run
        raise UsageError("--prove needs a whole-run rss limit to prove (e.g. --budget rss=300MiB)")
    say(
        f"memgauge check: proving rss {format_bytes(limit)}: an unlimited run and one under the limit, cold\n"
    )
    base, under = prove_limit(target, limit)
    if base.peak_bytes == 0:
        raise LimitError("--prove needs a memory cgroup (root, or a delegated cgroup)")
    proof = Proof(limit, True, base, under)
    say(f"memgauge check: {proof.note}\n")
    return apply_proof(verdict, survived=proof.survived, note=proof.note)


def _numbered(path: str, i: int, n: int) -> str:
    if n == 1:
        return path
    stem, ext = os.path.splitext(path)
    return f"{stem}-{i}{ext or RECORD_SUFFIX}"


def _verdict(
    runs: list[Profile],
    baselines: list[Profile],
    budget: Budget,
    memory_tolerance: float | None,
    time_tolerance: float | None,
) -> Verdict:
    from memgauge.gate import Verdict, judge_baseline, judge_runs

    parts: list[Verdict] = []
    if budget:
        parts.append(judge_runs(runs, budget))
    if baselines:
        parts.append(
            judge_baseline(
                runs, baselines, max_memory_increase=memory_tolerance, max_time_increase=time_tolerance
            )
        )
    first = parts[0]
    return Verdict(
        results=tuple(r for part in parts for r in part.results),
        program_failed=first.program_failed,
        program_status=first.program_status,
        runs=len(runs),
        baselines=len(baselines),
    )


def _output(
    verdict: Verdict, runs: list[Profile], name: str, args: argparse.Namespace, *, stdout: bool
) -> None:
    judged = Judged(verdict, runs, name)
    text = need(FORMATS[args.format].verdict, args.format)(judged, Look())
    if args.output:
        write_output(args.output, text, "verdict")
        say(f"verdict: {args.output}\n")
        if args.format == "terminal":
            return
        # the file has the asked format; the stream, where a person reads it, the table
        text = need(FORMATS["terminal"].verdict, "terminal")(judged, Look())
    stream = sys.stdout if stdout else sys.stderr
    if stream is not None:
        try:
            stream.write(text)
            stream.flush()
        except (OSError, ValueError):
            pass
