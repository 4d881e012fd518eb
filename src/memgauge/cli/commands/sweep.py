"""``memgauge sweep``: run a program at many sizes and say how memory and time grow.

    memgauge sweep pipeline.py --param N_SAMPLES=1e4,3e4,1e5 --param N_FEATURES=10,100 \\
        --predict N_SAMPLES=1e7 --budget rss=8GiB --confirm --html sweep.html
    memgauge sweep cubes.py --param WORKERS=1,2,4,8 --metric items
    memgauge sweep --load sweep.json --predict N=1e8            # re-analyse a record, run nothing

Exit status (also in README.md): 0 every run measured and exited 0 (and, with a budget, a size fits
and any confirming run stayed within it), 1 with a budget: nothing fits, or the confirming run went
over, 2 a run failed (non-zero exit, killed, not measured), 130 interrupted (the record keeps the
runs that finished); memgauge's own codes otherwise (64 usage, ...).

This module reads and checks the command line and plans the sweep; ``_sweep_run`` runs it, confirms
the sizes found and reports.
"""

from __future__ import annotations

import argparse
import os

from memgauge._errors import TargetNotFoundError, UsageError
from memgauge._files import check_output
from memgauge.cli._common import Program, color_options, default_profile_path, naming, run_report_options, say
from memgauge.cli._parser import Parser
from memgauge.cli._spelling import renamed_option
from memgauge.cli.commands._sweep_run import (
    Progress,
    check_outputs,
    check_size,
    confirm_sizes,
    limits_of,
    predict_at_of,
    report,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.sweep import SweepPlan


class SweepCommand:
    name = "sweep"
    summary = "run a program at many sizes, fit growth laws, find the largest size under a budget"
    usage: str | None = (
        "memgauge sweep [options] (script.py | -m module) --param NAME=V1,V2,... [-- program args]"
    )
    description = (
        "Run a program once per combination of parameter values (each a fresh, isolated "
        "measured run), then report per point the resident peak, phases, time and metrics, the "
        "growth law of each against each size, predictions, and the largest size under a budget. "
        "Parameters reach the program as environment variables, and as {NAME} in --arg templates "
        "and in the program arguments after --."
    )
    examples: tuple[str, ...] = (
        "memgauge sweep job.py --param N=1e4,3e4,1e5 --predict N=1e7  # growth laws, a prediction",
        "memgauge sweep job.py --param N=1e4,1e5,1e6 --budget 'rss=8GiB wall=10min'  # the largest N in it",
        "memgauge sweep --load sweep.json --predict N=1e8  # re-analyse a record, run nothing",
    )
    program: Program = "after-dashes"

    def prepare_parser(self, parser: Parser) -> None:
        p = parser
        p.add_argument("script", nargs="?", help="the Python script to run")
        p.add_argument("-m", dest="module", metavar="MODULE", help="run a module instead of a script")
        p.add_argument(
            "--param",
            action="append",
            default=[],
            metavar="NAME=V1,V2",
            help="a parameter and its values (repeatable; the grid is every combination)",
        )
        p.add_argument(
            "--arg",
            action="append",
            default=[],
            metavar="TEMPLATE",
            help='program arguments with {NAME} replaced, split as a shell would: --arg "--rows {N}"',
        )
        p.add_argument("--repeat", type=int, default=1, metavar="N", help="runs per point (default 1)")
        p.add_argument(
            "--predict",
            action="append",
            default=[],
            metavar="NAME=V",
            help="extrapolate every metric to this size (another --predict may fix a measured value of "
            "another parameter)",
        )
        p.add_argument(
            "--budget",
            action="append",
            default=[],
            metavar="SPEC",
            help="limits such as 'rss=8GiB wall=10min' (commas also separate): report the largest size "
            "that fits each",
        )
        p.add_argument("--policy", metavar="NAME", help="a named budget from memgauge.toml / pyproject.toml")
        p.add_argument(
            "--size", metavar="NAME", help="the parameter a budget searches along (default: the first)"
        )
        p.add_argument(
            "--confirm",
            action="store_true",
            help="with --budget: run once at the largest size found, to check it",
        )
        p.add_argument(
            "--worker-param",
            metavar="NAME",
            help="the parameter that counts workers (default: by its name)",
        )
        # its old spelling: --workers means "runs at once" in serve, so sweep's is renamed; still
        # read, with a warning, and kept out of --help
        p.add_argument("--workers", dest="old_worker_param", metavar="NAME", help=argparse.SUPPRESS)
        p.add_argument(
            "--metric",
            metavar="NAME",
            help="the program metric (memgauge.record) whose rate is the throughput (default: the first)",
        )
        p.add_argument(
            "--engine", choices=["local", "ray"], default="local", help="where runs go (default local)"
        )
        p.add_argument(
            "--address", metavar="ADDR", help="--engine ray: the cluster (default: start a local one)"
        )
        p.add_argument(
            "--concurrency",
            type=int,
            metavar="N",
            help="runs at the same time (local default 1: concurrent runs disturb each other's times)",
        )
        p.add_argument(
            "--cpus", type=float, default=1.0, metavar="N", help="CPUs each run asks of Ray (default 1)"
        )
        p.add_argument(
            "--gpus", type=float, default=0.0, metavar="N", help="GPUs each run asks of Ray (default 0)"
        )
        p.add_argument("--memory", metavar="SIZE", help="memory each run asks of Ray, e.g. 4GiB")
        p.add_argument("--timeout", metavar="DURATION", help="stop a run after this long, e.g. 10min")
        p.add_argument(
            "--json", metavar="PATH", help="the sweep record (default: memgauge-sweep-NAME-TIME.json)"
        )
        p.add_argument("--no-json", action="store_true", help="write no record")
        p.add_argument("--save", metavar="DIR", help="also keep every run's profile in DIR")
        p.add_argument("--load", metavar="RECORD.json", help="analyse a saved sweep record; run nothing")
        p.add_argument("--html", metavar="PATH", help="write the HTML report (one file, works offline)")
        run_report_options(p, "sweep")
        p.add_argument("--no-lines", action="store_true", help="no line sampling in the runs")
        p.add_argument(
            "--cgroup", choices=["auto", "v2", "v1", "off"], default="auto", help="as for memgauge run"
        )
        color_options(p)

    def run(self, args: argparse.Namespace, program: list[str]) -> int:
        renamed_option(args, "sweep", "--workers", "--worker-param", "NAME")
        if args.load:
            return _loaded(args, program)
        plan = _plan(args, program)
        limits = limits_of(args)
        if args.confirm and not limits:
            raise UsageError("--confirm checks the largest size under a budget: give --budget or --policy")
        check_outputs(args)
        record_path = None if args.no_json else (args.json or _default_record_path(plan))
        if record_path is not None:
            check_output(record_path, "sweep record")
        # parsed before any run: a bad --predict must not cost a whole sweep
        predict_at = predict_at_of(args, plan.params)
        check_size(args, plan.params)
        from memgauge.sweep import make_engine, run_sweep

        engine = make_engine(args.engine, concurrency=args.concurrency, address=args.address)
        try:
            if args.engine == "local" and (engine.concurrency or 1) > 1:
                say(
                    f"memgauge: warning: --concurrency {engine.concurrency} runs points at the same "
                    "time: their wall and CPU times disturb each other (and their peaks when memory is "
                    "short); use --concurrency 1 for timings\n"
                )
            progress = Progress(args.quiet, _total(plan))
            try:
                result = run_sweep(plan, engine, record_path=record_path, on_progress=progress.update)
            except KeyboardInterrupt:
                progress.close()
                if record_path is not None:
                    say(f"memgauge: interrupted; the runs that finished are in {record_path}\n")
                raise
            progress.close()
            if args.confirm:
                confirm_sizes(args, plan, engine, result, limits, predict_at, record_path)
        finally:
            engine.close()
        return report(args, result, limits, record_path=record_path, predict_at=predict_at)


def _loaded(args: argparse.Namespace, program: list[str]) -> int:
    """--load: the report of a saved sweep record, no run."""
    from memgauge.model import load_sweep

    if args.script or args.module or args.param or program or args.arg:
        raise UsageError("--load analyses a saved record: give no program and no --param")
    if args.confirm:
        raise UsageError("--confirm runs the program: it cannot be used with --load")
    if not os.path.exists(args.load):  # exit 66, as for a missing profile (README)
        raise TargetNotFoundError(f"no such sweep record: {args.load}")
    with naming(args.load):
        record = load_sweep(args.load)
    return report(args, record, limits_of(args))


def _plan(args: argparse.Namespace, program_args: list[str]) -> SweepPlan:
    from memgauge._units import parse_bytes
    from memgauge.cli._values import script_target, timeout_option
    from memgauge.sweep import Resources, SweepPlan, check_templates, expand, grid, parse_params

    target = script_target(args, " (or --load RECORD.json)")
    params = parse_params(args.param)
    check_templates([*args.arg, *program_args], params)
    for point in grid(params):
        # a value that breaks the shell splitting ("it's") is refused now, not when its run is due
        expand(args.arg, point)
    if args.repeat < 1:
        raise UsageError("--repeat must be at least 1")
    if args.concurrency is not None and args.concurrency < 1:
        raise UsageError("--concurrency must be at least 1")
    if args.cpus < 0 or args.gpus < 0:
        raise UsageError("--cpus and --gpus cannot be negative")
    if args.engine == "local" and (args.memory or args.gpus or args.cpus != 1.0):
        raise UsageError("--cpus, --gpus and --memory are resource requests for --engine ray")
    run_options = ["--cgroup", args.cgroup]
    if args.no_lines:
        run_options.append("--no-lines")
    timeout = timeout_option(args.timeout)
    if args.save and os.path.exists(args.save) and not os.path.isdir(args.save):
        raise UsageError(f"--save {args.save} is not a directory")
    return SweepPlan(
        target=target,
        params=params,
        args=program_args,
        templates=list(args.arg),
        repeat=args.repeat,
        run_options=run_options,
        resources=Resources(
            cpus=args.cpus, gpus=args.gpus, memory_bytes=parse_bytes(args.memory) if args.memory else None
        ),
        timeout_seconds=timeout,
        cwd=os.getcwd(),
        save_dir=os.path.abspath(args.save) if args.save else None,
    )


def _total(plan: SweepPlan) -> int:
    n = plan.repeat
    for values in plan.params.values():
        n *= len(values)
    return n


def _default_record_path(plan: SweepPlan) -> str:
    from memgauge.runner import parse_target

    return default_profile_path(f"sweep-{parse_target(plan.target).name}")
