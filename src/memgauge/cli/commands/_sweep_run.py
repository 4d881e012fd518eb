"""``memgauge sweep`` once its command line is read (``sweep.py``): the budget's limits, the checks
that need the parameters, the confirming runs at the sizes found, the report and its exit status,
and the progress shown while the runs go."""

from __future__ import annotations

import argparse
import sys

from memgauge._errors import UsageError
from memgauge._files import check_output, same_file, write_output
from memgauge.cli._common import FAILED, OVER_BUDGET, PASSED, emit, say, terminal_width_color

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.analysis import SweepAnalysis
    from memgauge.model import Confirmation, SweepResult, Value
    from memgauge.sweep import Engine, SweepPlan, SweepProgress

# confirming runs per combination of the other parameters, at most
MAX_CONFIRMATIONS = 3


def limits_of(args: argparse.Namespace) -> list[tuple[str, float, str]]:
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
        say(f"memgauge: note: a sweep does not measure {', '.join(skipped)}; those limits are not searched\n")
    if not limits:
        raise UsageError(
            "the budget has no limit a sweep can search with (rss, wall, cpu, PHASE.rss, PHASE.wall)"
        )
    return limits


def predict_at_of(
    args: argparse.Namespace, params: dict[str, list[Value]]
) -> tuple[str, float, dict[str, Value]] | None:
    if not args.predict:
        return None
    from memgauge.sweep import parse_predict

    return parse_predict(args.predict, params)


def check_size(args: argparse.Namespace, params: dict[str, list[Value]]) -> None:
    if args.size is not None:
        values = params.get(args.size)
        if values is None:
            raise UsageError(f"--size {args.size}: no such --param")
        if len(values) < 2 or any(isinstance(v, str) for v in values):
            raise UsageError(f"--size {args.size}: it must be numeric, with more than one value")
    if args.worker_param is not None:
        values = params.get(args.worker_param)
        if values is None:
            raise UsageError(f"--worker-param {args.worker_param}: no such --param")
        # checked now: a text parameter failed only in the analysis, after every run
        if any(isinstance(v, str) for v in values):
            raise UsageError(f"--worker-param {args.worker_param}: a worker count must be numeric")


def check_outputs(args: argparse.Namespace) -> None:
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


def confirm_sizes(
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
                say(f"memgauge: confirming {point_label(ordered)} (largest within {row.limit_text})\n")
            run = confirm(plan, engine, ordered, len(result.confirmations) + 1)
            confirmation = Confirmation(ordered, row.metric, row.prediction.value, row.limit, run)
            result.confirmations.append(confirmation)
            ran = True
            if record_path is not None:
                result.save(record_path)
            if confirmation.fits is not False:
                settled.add(key)
            elif not args.quiet:
                say(
                    f"memgauge: {point_label(ordered)} went over {row.limit_text}; "
                    "fitting again with that run and searching again\n"
                )
        if not ran:
            break


def report(
    args: argparse.Namespace,
    result: SweepResult,
    limits: list[tuple[str, float, str]],
    *,
    record_path: str | None = None,
    predict_at: tuple[str, float, dict[str, Value]] | None = None,
) -> int:
    from memgauge.analysis import analyze
    from memgauge.cli._formats import FORMATS, PAGE, Look, need

    if args.load:
        for path in (args.output, args.html):
            if path and same_file(path, args.load):
                raise UsageError(f"{path} would overwrite the sweep record {args.load}")
        check_outputs(args)
        predict_at = predict_at_of(args, result.params)
        check_size(args, result.params)
    analysis = analyze(
        result,
        predict_at=predict_at,
        limits=limits,
        size=args.size,
        workers=args.worker_param,
        throughput=args.metric,
    )
    if args.html:
        write_output(args.html, need(PAGE.sweep, "html")(analysis, Look()), "HTML report")
    fmt = args.format or "terminal"
    text = need(FORMATS[fmt].sweep, fmt)(analysis, Look(*terminal_width_color(args)))
    emit(text if text.endswith("\n") else text + "\n", args.output)
    if record_path is not None:
        say(f"sweep record: {record_path}\n")
    if args.html:
        say(f"report: {args.html}\n")
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
        return FAILED
    return PASSED


class Progress:
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
            say(f"memgauge: sweep of {total} run(s)\n")

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
            else f"{format_bytes(p.run.needs_bytes or p.run.rss_bytes)}, {format_seconds(p.run.wall_seconds)}"
        )
        if not p.run.ok and not p.run.error:
            what += f" ({p.run.exit})"
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=p.done, left=left, last=what)
        else:
            say(f"[{p.done}/{p.total}] {what}" + (f"; {left}" if left else "") + "\n")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
