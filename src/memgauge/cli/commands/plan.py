"""``memgauge plan``: will these programs fit one machine together?

    memgauge plan a.json b.json c.json --machine 8GiB,4cores     # worst case and random offsets
    memgauge plan model.json --copies 12 --machine 8GiB --verify  # run 12 copies together to check
    memgauge plan serve.py --max-copies --machine 512MiB --verify # the most copies, proven
    memgauge plan --catalogue machines.toml --sweep sweep.json    # which machine to buy

Inputs are ``memgauge run`` profiles, or programs measured once each here. Exit status: 0 they
fit by the rule (and every verifying run went as the plan said), 1 they do not (or a verifying run
contradicted the plan), memgauge's own codes otherwise.
"""

from __future__ import annotations

import argparse
import os

from memgauge._errors import TargetNotFoundError, UsageError
from memgauge.cli._common import OVER_BUDGET, PASSED, Program, color_options, emit, say, terminal_width_color
from memgauge.cli._formats import format_option
from memgauge.cli._parser import Parser

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.model import PlanRecord


def parse_machine(text: str) -> tuple[int, int]:
    """``8GiB`` or ``8GiB,4cores``: the machine's memory and cores (default: this machine's)."""
    from memgauge._units import parse_bytes

    size, _, cores = text.partition(",")
    try:
        memory = parse_bytes(size.strip())
    except ValueError:
        raise UsageError(f"--machine takes a size such as 8GiB[,4cores], not {text!r}") from None
    count = os.cpu_count() or 1
    if cores:
        word = cores.strip().removesuffix("cores").removesuffix("core").strip()
        if not word.isdigit() or int(word) < 1:
            raise UsageError(f"--machine's cores are a count such as 4cores, not {cores!r}")
        count = int(word)
    if memory <= 0:
        raise UsageError("--machine needs a memory size above 0")
    return memory, count


def _every(specs: list[str]) -> dict[str, float]:
    from memgauge._units import parse_seconds

    out: dict[str, float] = {}
    for spec in specs:
        name, eq, value = spec.rpartition("=")
        try:
            seconds = parse_seconds(value) if eq else 0.0
        except ValueError:
            seconds = 0.0
        if not name or seconds <= 0:
            raise UsageError(f"--every takes INPUT=DURATION such as scoring.json=60s, not {spec!r}")
        out[name] = seconds
    return out


class PlanCommand:
    name = "plan"
    summary = "will these programs fit one machine together? (worst case, random offsets, verified)"
    usage: str | None = "memgauge plan [options] --machine SIZE[,Ncores] (profile.json | script.py) ..."
    description = (
        "Judge whether programs fit one machine together: the worst case (every container need at "
        "once, plus the kernel's share per group) and their memory timelines combined under random "
        "start offsets, as percentiles and the probability of exceeding the machine. --verify runs "
        "them together in one memory cgroup limited to the machine's memory, caches cold."
    )
    examples: tuple[str, ...] = (
        "memgauge plan a.json b.json c.json --machine 8GiB,4cores  # three programs on one machine",
        "memgauge plan serve.py --max-copies --machine 512MiB --verify  # the most copies that fit, then run",
        "memgauge plan --catalogue machines.toml --sweep sweep.json --target-rate 500",
    )
    program: Program = "none"

    def prepare_parser(self, parser: Parser) -> None:
        p = parser
        p.add_argument("inputs", nargs="*", metavar="INPUT", help="a profile (.json) or a Python script")
        p.add_argument("--machine", metavar="SIZE[,Ncores]", help="the machine, e.g. 8GiB,4cores")
        p.add_argument(
            "--copies", type=int, default=1, metavar="N", help="N copies of each input (default 1)"
        )
        p.add_argument(
            "--max-copies",
            action="store_true",
            help="the largest number of copies of the one input that fits",
        )
        p.add_argument(
            "--rule",
            choices=["worst", "p99", "p99.9"],
            default="worst",
            help="what must stay within the machine: the worst case (default) or a percentile of the "
            "combined peak under random offsets",
        )
        p.add_argument(
            "--offsets", metavar="S,S,...", help="each program's start in seconds, in order (default all 0)"
        )
        p.add_argument(
            "--every",
            action="append",
            default=[],
            metavar="INPUT=DURATION",
            help="INPUT starts again every DURATION (a scoring job every minute: job.json=60s); repeatable",
        )
        p.add_argument(
            "--window",
            metavar="DURATION",
            help="one-shot programs start within this span (default: the longest run)",
        )
        p.add_argument(
            "--trials", type=int, default=10_000, metavar="N", help="random offsets drawn (default 10000)"
        )
        p.add_argument(
            "--grid",
            type=int,
            default=512,
            metavar="N",
            help="bins of the random offsets' grid (default 512; more: closer, slower)",
        )
        p.add_argument("--seed", type=int, default=0, metavar="N", help="the random draws' seed (default 0)")
        p.add_argument(
            "--verify", action="store_true", help="run them together under the machine's memory, caches cold"
        )
        p.add_argument(
            "--random-runs",
            type=int,
            default=2,
            metavar="N",
            help="--verify: runs at random offsets (default 2)",
        )
        p.add_argument(
            "--evict",
            action="append",
            default=[],
            metavar="PATH",
            help="--verify: also evict the files under PATH before each run; repeatable",
        )
        p.add_argument(
            "--stall",
            type=float,
            default=5.0,
            metavar="X",
            help="--verify: stop a run after X times the longest program's wall time, at least 20 s "
            "(default 5)",
        )
        p.add_argument(
            "--catalogue",
            metavar="MACHINES.toml",
            help="which machine: [[machine]] name, cores, memory, price_per_hour (with --sweep)",
        )
        p.add_argument(
            "--sweep", metavar="RECORD.json", help="--catalogue: a sweep record over the worker count"
        )
        p.add_argument(
            "--metric", default="items", metavar="NAME", help="--catalogue: the items metric (default items)"
        )
        p.add_argument(
            "--worker-param", metavar="NAME", help="--catalogue: the worker count (default: WORKERS, ...)"
        )
        p.add_argument(
            "--target-rate", type=float, metavar="N", help="--catalogue: items per second to reach"
        )
        p.add_argument(
            "--emulate",
            action="store_true",
            help="--catalogue: run each shape this host can hold under its CPU quota and memory limit",
        )
        p.add_argument(
            "--emulate-runs",
            type=int,
            default=3,
            metavar="N",
            help="--emulate: runs per shape, their median rate (default 3)",
        )
        format_option(p, "plan", "report format")
        p.add_argument("-o", "--output", metavar="PATH", help="write the report to PATH, not stdout")
        p.add_argument("--json", metavar="PATH", help="also write the plan record (JSON) to PATH")
        p.add_argument("--html", metavar="PATH", help="also write the HTML report to PATH")
        p.add_argument(
            "--width", type=int, metavar="N", help="terminal width (default: the terminal's, or 100)"
        )
        p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
        color_options(p)

    def run(self, args: argparse.Namespace, program: list[str]) -> int:
        from memgauge.analysis import build_plan, copies_of, max_copies
        from memgauge.cli._plan_verify import prove_copies, read_inputs, verify_plan

        if args.catalogue:
            return _catalogue(args)
        memory, cores, window, offsets = _plan_options(args)
        read, roots = read_inputs(args.inputs, cores=cores, every=_every(args.every), quiet=args.quiet)
        roots = roots + list(args.evict)
        inputs = [c for one in read for c in copies_of(one, args.copies)]
        common = {"trials": args.trials, "seed": args.seed, "window_seconds": window, "bins": args.grid}
        record = build_plan(
            inputs, machine_bytes=memory, machine_cores=cores, rule=args.rule, offsets=offsets, **common
        )
        if args.max_copies:
            found = max_copies(read[0], machine_bytes=memory, rule=args.rule, **common)
            if args.verify:
                found = prove_copies(
                    found,
                    read[0],
                    memory,
                    roots=roots,
                    stall=args.stall,
                    quiet=args.quiet,
                    window=window,
                    seed=args.seed,
                )
            record.max_copies = found
        elif args.verify:
            record = verify_plan(
                record,
                inputs,
                roots=roots,
                randoms=args.random_runs,
                seed=args.seed,
                stall=args.stall,
                quiet=args.quiet,
            )
        _show_plan(record, args)
        agree = all(r.agrees for r in record.runs)
        if record.max_copies is not None and record.max_copies.proof is not None:
            agree = agree and record.max_copies.proven
        return PASSED if record.fits and agree else OVER_BUDGET


def _plan_options(args: argparse.Namespace) -> tuple[int, int, float | None, list[float] | None]:
    """The machine's memory and cores, the window and the offsets, every option checked before
    anything is read or run."""
    from memgauge._files import check_output

    if not args.inputs or not args.machine:
        raise UsageError("give profiles or programs and --machine SIZE (or --catalogue with --sweep)")
    memory, cores = parse_machine(args.machine)
    if args.copies < 1:
        raise UsageError("--copies must be at least 1")
    if args.max_copies and (len(args.inputs) != 1 or args.copies != 1):
        raise UsageError("--max-copies takes one input and no --copies")
    if args.grid < 16:
        raise UsageError("--grid must be at least 16 bins")
    for path in (args.output, args.json, args.html):
        if path:
            check_output(path, "report")
    return (memory, cores, *_window_offsets(args))


def _window_offsets(args: argparse.Namespace) -> tuple[float | None, list[float] | None]:
    from memgauge._units import parse_seconds

    window = None
    if args.window is not None:
        try:
            window = parse_seconds(args.window)
        except ValueError:
            raise UsageError(f"--window takes a duration such as 30s, not {args.window!r}") from None
    offsets = None
    if args.offsets:
        try:
            offsets = [float(x) for x in args.offsets.split(",")]
        except ValueError:
            raise UsageError(f"--offsets takes seconds such as 0,1.5, not {args.offsets!r}") from None
    return window, offsets


def _show_plan(record: PlanRecord, args: argparse.Namespace) -> None:
    """The plan record and HTML report where asked, then the report in its format."""
    from memgauge._files import write_output
    from memgauge.cli._formats import FORMATS, PAGE, Look, need

    if args.json:
        write_output(args.json, need(FORMATS["json"].plan, "json")(record, Look()), "plan record")
        say(f"plan record: {args.json}\n")
    if args.html:
        write_output(args.html, need(PAGE.plan, "html")(record, Look()), "HTML report")
        say(f"report: {args.html}\n")
    fmt = args.format or "terminal"
    emit(need(FORMATS[fmt].plan, fmt)(record, Look(*terminal_width_color(args))), args.output)


def _catalogue(args: argparse.Namespace) -> int:
    from memgauge.analysis import choose_machines, worker_laws, workers_param
    from memgauge.cli._plan_catalogue import emulate, load_catalogue, machines_report
    from memgauge.model import load_sweep

    if not args.sweep:
        raise UsageError("--catalogue needs --sweep RECORD.json: a sweep over the worker count")
    if args.inputs or args.machine:
        raise UsageError("--catalogue takes no programs and no --machine: the sweep and the catalogue say it")
    shapes = load_catalogue(args.catalogue)
    if not os.path.isfile(args.sweep):
        raise TargetNotFoundError(f"no sweep record {args.sweep}")
    result = load_sweep(args.sweep)
    param = workers_param(result, args.worker_param)
    if param is None:
        raise UsageError("the sweep varies no worker count: name it with --worker-param")
    try:
        laws = worker_laws(result, param, args.metric)
    except ValueError as e:
        raise UsageError(str(e)) from None
    choices, cheapest = choose_machines(laws, shapes, args.target_rate)
    emulated = (
        emulate(result, param, args.metric, choices, runs=args.emulate_runs, quiet=args.quiet)
        if args.emulate
        else None
    )
    text = machines_report(laws, choices, cheapest, args.target_rate, args.format or "terminal", emulated)
    emit(text, args.output)
    return PASSED if cheapest is not None else OVER_BUDGET
