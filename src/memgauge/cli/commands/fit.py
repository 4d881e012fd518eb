"""``memgauge fit``: the largest value of a parameter whose run stays within a budget.

    memgauge fit train.py --param BATCH_SIZE --budget rss=2GiB --json fit.json
    memgauge fit train.py --param BATCH_SIZE --budget 'rss=2GiB step=0.5s' --margin 10% --max 4096
    memgauge fit -m tool --param N --budget wall=30s --arg "--rows {N}"

Each trial is a fresh measured run; the search (``sweep.fit``) follows the growth law fitted so
far; the answer is verified by a run under the budget's ``rss`` as a hard memory limit, caches
cold. Exit status (also in README.md): 0 found and verified, 1 nothing fits (or the verifying run
did not stay within the budget), 2 the runs failed, 130 interrupted (the best value proven so far
reported and saved), memgauge's own codes otherwise.
"""

from __future__ import annotations

import argparse
import os

from memgauge._errors import UsageError
from memgauge._files import check_output, write_output
from memgauge.cli._common import (
    FAILED,
    INTERRUPTED,
    OVER_BUDGET,
    PASSED,
    Program,
    color_options,
    emit,
    run_report_options,
    say,
    terminal_width_color,
)
from memgauge.cli._parser import Parser
from memgauge.cli.commands._fit_what_if import add_what_if_options, run_what_if, wanted, what_if_alone

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from memgauge.model import FitRecord, FitTrial
    from memgauge.sweep import FitPlan


class FitCommand:
    name = "fit"
    summary = "find the largest value of a parameter whose run stays within a budget, and verify it"
    usage: str | None = (
        "memgauge fit [options] (script.py | -m module) --param NAME --budget SPEC [-- program args]"
    )
    description = (
        "Run the program at values of one parameter (each a fresh measured run, the next value "
        "chosen by the growth law fitted so far, bisection as a fallback) for the largest value "
        "whose run stays within the budget (rss=, wall=, gpu=, step= per training step), then "
        "verify it by a run under the budget's rss as a hard memory limit, caches cold. The "
        "parameter reaches the program as an environment variable, a module-level constant of the "
        "script (NAME = 64 at its top level), or {NAME} in --arg templates and program arguments."
    )
    examples: tuple[str, ...] = (
        "memgauge fit train.py --param BATCH_SIZE --budget rss=2GiB  # the largest batch within 2 GiB",
        "memgauge fit train.py --param BATCH_SIZE --budget 'rss=2GiB step=0.5s' --margin 10%",
        "memgauge fit train.py --param BATCH --budget rss=2GiB --remedies  # what each remedy buys",
    )
    program: Program = "after-dashes"

    def prepare_parser(self, parser: Parser) -> None:
        p = parser
        p.add_argument("script", nargs="?", help="the Python script to run")
        p.add_argument("-m", dest="module", metavar="MODULE", help="run a module instead of a script")
        p.add_argument("--param", metavar="NAME", help="the integer parameter to fit")
        p.add_argument(
            "--budget",
            action="append",
            default=[],
            metavar="SPEC",
            help="limits such as 'rss=2GiB wall=60s step=0.5s' (gpu= where GPU figures exist; commas "
            "also separate)",
        )
        p.add_argument(
            "--margin",
            default="0%",
            metavar="PCT",
            help="keep this share of each limit free in the search (default 0%%); the verification "
            "holds the answer to the budget itself",
        )
        p.add_argument(
            "--tolerance",
            default="3%",
            metavar="PCT",
            help="stop once a value this much above the answer is over the budget (default 3%%; "
            "0%% for the exact boundary)",
        )
        p.add_argument("--min", type=int, default=1, metavar="N", help="the smallest value (default 1)")
        p.add_argument("--max", type=int, metavar="N", help="the largest value (default: no bound)")
        p.add_argument(
            "--start",
            type=int,
            metavar="N",
            help="the first value tried (default: the program's own value where it can be read, else --min)",
        )
        p.add_argument(
            "--arg",
            action="append",
            default=[],
            metavar="TEMPLATE",
            help='program arguments with {NAME} replaced, split as a shell would: --arg "--batch {NAME}"',
        )
        p.add_argument("--timeout", metavar="DURATION", help="stop a run after this long, e.g. 10min")
        p.add_argument("--no-verify", action="store_true", help="skip the run under the hard limit")
        p.add_argument("--json", metavar="PATH", help="write the fit record (JSON) to PATH")
        p.add_argument("--html", metavar="PATH", help="write the HTML report (the curve and the budget)")
        run_report_options(p, "fit")
        color_options(p)
        add_what_if_options(p)

    def run(self, args: argparse.Namespace, program: list[str]) -> int:
        from memgauge.sweep import fit

        if wanted(args) and not args.budget:
            what_if_alone(args, program)  # remedies or a prediction, no fit
            return PASSED
        plan = _plan(args, program)
        for path, what in ((args.json, "fit record"), (args.html, "report"), (args.output, "report")):
            if path is not None:
                check_output(path, what)
        record = fit(plan, None if args.quiet else _progress(plan))
        code = _report(args, record)
        if record.reason == "interrupted":
            # the best value so far is printed and saved; the exit says the fit did not finish
            return INTERRUPTED
        if wanted(args):
            run_what_if(args, plan.target, program, record.value, plan.limits.get("rss"))
        return code


def _plan(args: argparse.Namespace, program_args: list[str]) -> FitPlan:
    from memgauge.cli._values import percent_option, script_target, timeout_option
    from memgauge.sweep import FitPlan, check_templates, expand

    target = script_target(args)
    if not args.param:
        raise UsageError("give the parameter to fit: --param NAME")
    if not args.budget:
        raise UsageError("give a budget: --budget rss=2GiB (or wall=, gpu=, step=)")
    params = {args.param: [args.min]}
    check_templates([*args.arg, *program_args], params)
    expand(args.arg, {args.param: args.min})
    margin = percent_option(args.margin, "--margin", below=1)
    tolerance = percent_option(args.tolerance, "--tolerance", example="3%", below=0.5)
    if args.max is not None and args.max < args.min:
        raise UsageError("--max is below --min")
    if args.start is not None and not (
        args.min <= args.start and (args.max is None or args.start <= args.max)
    ):
        raise UsageError("--start must lie between --min and --max")
    timeout = timeout_option(args.timeout)
    return FitPlan(
        target=target,
        parameter=args.param,
        limits=limits_of(args.budget),
        args=program_args,
        templates=list(args.arg),
        margin=margin,
        tolerance=tolerance,
        low=args.min,
        high=args.max,
        start=args.start,
        timeout_seconds=timeout,
        verify=not args.no_verify,
        cwd=os.getcwd(),
    )


def limits_of(specs: list[str]) -> dict[str, float]:
    """``--budget`` as metric -> limit: ``step=`` (a training step's median time) read here, the
    rest by the gate's parser (which has no per-step limit). Phase limits have no place in a fit."""
    from memgauge._units import parse_seconds
    from memgauge.gate import parse_budget

    limits: dict[str, float] = {}
    rest: list[str] = []
    for spec in specs:
        for token in spec.replace(",", " ").split():
            key, sep, value = token.partition("=")
            if key.strip().lower() == "step" and sep:
                try:
                    limits["step"] = parse_seconds(value)
                except ValueError:
                    raise UsageError(f"--budget {token!r}: step takes a duration such as 0.5s") from None
            else:
                rest.append(token)
    if rest:
        for limit in parse_budget(" ".join(rest)).limits:
            if limit.phase is not None or limit.metric not in ("rss", "wall", "gpu"):
                raise UsageError(f"--budget {limit.text or limit.key}: fit takes rss=, wall=, gpu= and step=")
            limits[limit.metric] = limit.value
    if not limits:
        raise UsageError("the budget is empty: give --budget rss=2GiB (or wall=, gpu=, step=)")
    return limits


def _progress(plan: FitPlan) -> Callable[[FitTrial], None]:
    from memgauge import render

    def show(trial: FitTrial) -> None:
        say(render.fit_trial_line(plan.parameter, trial) + "\n")

    return show


def _report(args: argparse.Namespace, record: FitRecord) -> int:
    from memgauge.cli._formats import FORMATS, PAGE, Look, need

    if args.json:
        write_output(args.json, need(FORMATS["json"].fit, "json")(record, Look()), "fit record")
    if args.html:
        write_output(args.html, need(PAGE.fit, "html")(record, Look()), "HTML report")
    fmt = args.format or "terminal"
    text = need(FORMATS[fmt].fit, fmt)(record, Look(*terminal_width_color(args)))
    emit(text if text.endswith("\n") else text + "\n", args.output)
    if record.value is None:
        failed = bool(record.trials) and all(t.error is not None for t in record.trials)
        return FAILED if failed else OVER_BUDGET
    if record.verification is not None and not record.verification.verified:
        return OVER_BUDGET
    return PASSED
