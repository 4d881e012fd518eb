"""``memgauge sweep``: run a program at many sizes and say how memory and time grow.

    memgauge sweep pipeline.py --param N_SAMPLES=1e4,3e4,1e5 --param N_FEATURES=10,100 \\
        --predict N_SAMPLES=1e7 --budget rss=8GiB --confirm --html sweep.html
    memgauge sweep cubes.py --param WORKERS=1,2,4,8 --metric items
    memgauge sweep --load sweep.json --predict N=1e8            # re-analyse a record, run nothing

Exit status (also in README.md): 0 every run measured and exited 0 (and, with a budget, a size fits
and any confirming run stayed within it), 1 with a budget: nothing fits, or the confirming run went
over, 2 a run failed (non-zero exit, killed, not measured), 130 interrupted (the record keeps the
runs that finished); memgauge's own codes otherwise (64 usage, ...).
"""

from __future__ import annotations

import argparse
import os
import sys

from memgauge._errors import UsageError
from memgauge._files import check_output, same_file, write_output
from memgauge.cli._main import (
    _color_options,
    _default_profile_path,
    _emit,
    _Parser,
    _say,
    terminal_width_color,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.analysis import SweepAnalysis
    from memgauge.model import Confirmation, SweepResult, Value
    from memgauge.sweep import Engine, SweepPlan, SweepProgress

ALL_OK, OVER_BUDGET, RUN_FAILED = 0, 1, 2
# confirming runs per combination of the other parameters, at most
MAX_CONFIRMATIONS = 3


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="memgauge sweep",
        usage="memgauge sweep [options] (script.py | -m module) --param NAME=V1,V2,... [-- program args]",
        description="Run a program once per combination of parameter values (each a fresh, isolated "
        "measured run), then report per point the resident peak, phases, time and metrics, the "
        "growth law of each against each size, predictions, and the largest size under a budget. "
        "Parameters reach the program as environment variables, and as {NAME} in --arg templates "
        "and in the program arguments after --.",
    )
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
        help="limits such as rss=8GiB,wall=10min: report the largest size that fits each",
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
        "--workers", metavar="NAME", help="the parameter that counts workers (default: by its name)"
    )
    p.add_argument(
        "--metric",
        metavar="NAME",
        help="the program metric (memgauge.record) whose rate is the throughput (default: the first)",
    )
    p.add_argument(
        "--engine", choices=["local", "ray"], default="local", help="where runs go (default local)"
    )
    p.add_argument("--address", metavar="ADDR", help="--engine ray: the cluster (default: start a local one)")
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
    p.add_argument("--json", metavar="PATH", help="the sweep record (default: memgauge-sweep-NAME-TIME.json)")
    p.add_argument("--no-json", action="store_true", help="write no record")
    p.add_argument("--save", metavar="DIR", help="also keep every run's profile in DIR")
    p.add_argument("--load", metavar="RECORD.json", help="analyse a saved sweep record; run nothing")
    p.add_argument("--html", metavar="PATH", help="write the HTML report (one file, works offline)")
    p.add_argument(
        "--format", choices=["terminal", "json"], default=None, help="report format (default terminal)"
    )
    p.add_argument("-o", "--output", metavar="PATH", help="write the report to PATH, not stdout")
    p.add_argument("--width", type=int, metavar="N", help="terminal width (default: the terminal's, or 100)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--no-lines", action="store_true", help="no line sampling in the runs")
    p.add_argument(
        "--cgroup", choices=["auto", "v2", "v1", "off"], default="auto", help="as for memgauge run"
    )
    _color_options(p)
    return p


def cmd_sweep(argv: list[str]) -> int:
    own, program_args = _split(argv)
    args = _parser().parse_args(own)
    if args.load:
        if args.script or args.module or args.param or program_args or args.arg:
            raise UsageError("--load analyses a saved record: give no program and no --param")
        if args.confirm:
            raise UsageError("--confirm runs the program: it cannot be used with --load")
        from memgauge.model import load_sweep

        result = load_sweep(args.load)
        return _report(args, result, _limits(args))
    plan = _plan(args, program_args)
    limits = _limits(args)
    if args.confirm and not limits:
        raise UsageError("--confirm checks the largest size under a budget: give --budget or --policy")
    _check_outputs(args)
    record_path = None if args.no_json else (args.json or _default_record_path(plan))
    if record_path is not None:
        check_output(record_path, "sweep record")
    # parsed before any run: a bad --predict must not cost a whole sweep
    predict_at = _predict_at(args, plan.params)
    _check_size(args, plan.params)
    from memgauge.sweep import make_engine, run_sweep

    engine = make_engine(args.engine, concurrency=args.concurrency, address=args.address)
    try:
        if args.engine == "local" and (engine.concurrency or 1) > 1:
            _say(
                f"memgauge: warning: --concurrency {engine.concurrency} runs points at the same time: "
                "their wall and CPU times disturb each other (and their peaks when memory is short); "
                "use --concurrency 1 for timings\n"
            )
        progress = _Progress(args.quiet, _total(plan))
        try:
            result = run_sweep(plan, engine, record_path=record_path, on_progress=progress.update)
        except KeyboardInterrupt:
            progress.close()
            if record_path is not None:
                _say(f"memgauge: interrupted; the runs that finished are in {record_path}\n")
            raise
        progress.close()
        if args.confirm:
            _confirm(args, plan, engine, result, limits, predict_at, record_path)
    finally:
        engine.close()
    return _report(args, result, limits, record_path=record_path, predict_at=predict_at)


def _split(argv: list[str]) -> tuple[list[str], list[str]]:
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1 :]
    return argv, []


def _plan(args: argparse.Namespace, program_args: list[str]) -> SweepPlan:
    from memgauge._units import parse_bytes, parse_seconds
    from memgauge.runner import parse_target
    from memgauge.sweep import Resources, SweepPlan, check_templates, expand, grid, parse_params

    if args.script and args.module:
        raise UsageError("give a script or -m MODULE, not both")
    if not args.script and not args.module:
        raise UsageError("nothing to run: give a script or -m MODULE (or --load RECORD.json)")
    target = ["-m", args.module] if args.module else [args.script]
    parse_target(target).check()  # fail now, not once per point
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
    timeout = None
    if args.timeout is not None:
        timeout = parse_seconds(args.timeout)
        if timeout <= 0:
            raise UsageError("--timeout must be positive")
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


def _limits(args: argparse.Namespace) -> list[tuple[str, float, str]]:
    """(metric, limit, text) for each limit of the budget a sweep can search with."""
    if not args.budget and args.policy is None:
        return []
    from memgauge.analysis import budget_metric
    from memgauge.gate import load_config, resolve_budget

    budget = resolve_budget(load_config(), policy=args.policy, budget_specs=args.budget)
    limits: list[tuple[str, float, str]] = []
    skipped: list[str] = []
    for limit in budget:
        metric = budget_metric(limit.metric, limit.phase)
        if metric is None:
            skipped.append(limit.key)
        else:
            limits.append((metric, limit.value, limit.text or limit.key))
    if skipped:
        _say(
            f"memgauge: note: a sweep does not measure {', '.join(skipped)}; those limits are not searched\n"
        )
    if not limits:
        raise UsageError(
            "the budget has no limit a sweep can search with (rss, wall, cpu, PHASE.rss, PHASE.wall)"
        )
    return limits


def _predict_at(
    args: argparse.Namespace, params: dict[str, list[Value]]
) -> tuple[str, float, dict[str, Value]] | None:
    if not args.predict:
        return None
    from memgauge.sweep import parse_predict

    return parse_predict(args.predict, params)


def _check_size(args: argparse.Namespace, params: dict[str, list[Value]]) -> None:
    if args.size is not None:
        values = params.get(args.size)
        if values is None:
            raise UsageError(f"--size {args.size}: no such --param")
        if len(values) < 2 or any(isinstance(v, str) for v in values):
            raise UsageError(f"--size {args.size}: it must be numeric, with more than one value")
    if args.workers is not None:
        values = params.get(args.workers)
        if values is None:
            raise UsageError(f"--workers {args.workers}: no such --param")
        # checked now: a text parameter failed only in the analysis, after every run
        if any(isinstance(v, str) for v in values):
            raise UsageError(f"--workers {args.workers}: a worker count must be numeric")


def _check_outputs(args: argparse.Namespace) -> None:
    for name in ("output", "html", "json"):
        value = getattr(args, name)
        if value is not None:
            if not value:
                raise UsageError(f"--{name} needs a path")
            check_output(value, "report" if name != "json" else "sweep record")
    paths = [p for p in (args.output, args.html, None if args.no_json else args.json) if p]
    for i, a in enumerate(paths):
        for b in paths[i + 1 :]:
            if same_file(a, b):
                raise UsageError(f"two outputs name the same file: {a}")
    if args.width is not None and not 40 <= args.width <= 1000:
        raise UsageError("--width must be between 40 and 1000")


def _default_record_path(plan: SweepPlan) -> str:
    from memgauge.runner import parse_target

    return _default_profile_path(f"sweep-{parse_target(plan.target).name}")


def _confirm(
    args: argparse.Namespace,
    plan: SweepPlan,
    engine: Engine,
    result: SweepResult,
    limits: list[tuple[str, float, str]],
    predict_at: tuple[str, float, dict[str, Value]] | None,
    record_path: str | None,
) -> None:
    from memgauge.analysis import analyze
    from memgauge.model import Confirmation
    from memgauge.sweep import confirm, point_label

    constant = {k: v[0] for k, v in result.params.items() if len(v) == 1}
    settled: set[str] = set()
    # a confirming run that goes over joins the data, the laws are fitted again and the search
    # repeats: growth that was too small to see at the sizes swept shows at the size predicted
    for _ in range(MAX_CONFIRMATIONS):
        analysis = analyze(result, limits=limits, size=args.size, predict_at=predict_at)
        ran = False
        for row in analysis.binding:
            key = repr(sorted(row.fixed.items()))
            if key in settled or row.status != "fits" or row.largest is None or row.prediction is None:
                continue
            size: Value = int(row.largest) if float(row.largest).is_integer() else row.largest
            params = {**constant, **row.fixed, row.param: size}
            ordered = {k: params[k] for k in result.params}
            if any(c.params == ordered for c in result.confirmations):
                settled.add(key)  # the search came back to a size already run
                continue
            if not args.quiet:
                _say(f"memgauge: confirming {point_label(ordered)} (largest within {row.limit_text})\n")
            run = confirm(plan, engine, ordered, len(result.confirmations) + 1)
            confirmation = Confirmation(ordered, row.metric, row.prediction.value, row.limit, run)
            result.confirmations.append(confirmation)
            ran = True
            if record_path is not None:
                result.save(record_path)
            if confirmation.fits is not False:
                settled.add(key)
            elif not args.quiet:
                _say(
                    f"memgauge: {point_label(ordered)} went over {row.limit_text}; "
                    "fitting again with that run and searching again\n"
                )
        if not ran:
            break


def _report(
    args: argparse.Namespace,
    result: SweepResult,
    limits: list[tuple[str, float, str]],
    *,
    record_path: str | None = None,
    predict_at: tuple[str, float, dict[str, Value]] | None = None,
) -> int:
    from memgauge import render
    from memgauge.analysis import analyze

    if args.load:
        for path in (args.output, args.html):
            if path and same_file(path, args.load):
                raise UsageError(f"{path} would overwrite the sweep record {args.load}")
        _check_outputs(args)
        predict_at = _predict_at(args, result.params)
        _check_size(args, result.params)
    analysis = analyze(
        result,
        predict_at=predict_at,
        limits=limits,
        size=args.size,
        workers=args.workers,
        throughput=args.metric,
    )
    if args.html:
        write_output(args.html, render.HtmlSweepRenderer().render(analysis), "HTML report")
    fmt = args.format or "terminal"
    if fmt == "json":
        text = render.JsonSweepRenderer().render(analysis)
    else:
        width, color = terminal_width_color(args)
        text = render.TerminalSweepRenderer(width=width, color=color).render(analysis)
    _emit(text if text.endswith("\n") else text + "\n", args.output)
    if record_path is not None:
        _say(f"sweep record: {record_path}\n")
    if args.html:
        _say(f"report: {args.html}\n")
    return _exit_status(analysis)


def _exit_status(analysis: SweepAnalysis) -> int:
    result = analysis.result
    if any(row.status == "none" for row in analysis.binding):
        return OVER_BUDGET
    last: dict[str, Confirmation] = {}
    for c in result.confirmations:  # a later confirmation of the same combination supersedes
        last[repr(sorted((k, v) for k, v in c.params.items() if k != analysis.size))] = c
    if any(c.fits is False for c in last.values()):
        return OVER_BUDGET
    runs = [r for p in result.points for r in p.runs] + [c.run for c in result.confirmations]
    if any(not r.ok for r in runs) or not result.complete:
        return RUN_FAILED
    return ALL_OK


class _Progress:
    """Points done and time left, on stderr: a bar on a terminal, a line per run otherwise."""

    def __init__(self, quiet: bool, total: int) -> None:
        self._quiet = quiet
        self._total = total
        self._bar = None
        self._task = None
        stream = sys.stderr
        if quiet or stream is None:
            return
        if stream.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn("sweep"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.fields[left]}"),
                TextColumn("{task.fields[last]}", markup=False),
                console=Console(file=stream),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("sweep", total=total, left="", last="")
        else:
            _say(f"memgauge: sweep of {total} run(s)\n")

    def update(self, p: SweepProgress) -> None:
        if self._quiet:
            return
        from memgauge._units import format_bytes, format_seconds
        from memgauge.sweep import point_label

        done = p.done >= p.total
        left = "" if p.remaining is None or done else f"about {format_seconds(p.remaining)} left"
        what = f"{point_label(p.params)}: " + (
            p.run.error
            if p.run.error
            else f"{format_bytes(p.run.rss_bytes)}, {format_seconds(p.run.wall_seconds)}"
        )
        if not p.run.ok and not p.run.error:
            what += f" ({p.run.exit})"
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=p.done, left=left, last=what)
        else:
            _say(f"[{p.done}/{p.total}] {what}" + (f"; {left}" if left else "") + "\n")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
