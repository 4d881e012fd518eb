"""``memgauge fit``'s what-if options: the remedy table (``--remedies``) and the prediction without
the hardware (``--predict-gpu``), run after the fit (at the value it found) or alone (without
``--budget``, at ``--what-if-at``).

    memgauge fit train.py --param BATCH --budget rss=2GiB --remedies
    memgauge fit train.py --param BATCH --remedies checkpoint,autocast --what-if-at 256
    memgauge fit train.py --param BATCH --predict-gpu 80GiB --what-if-at 64
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from memgauge._errors import UsageError
from memgauge._files import write_output
from memgauge.cli._common import emit, say, terminal_width_color
from memgauge.cli._parser import Parser

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.runner import Target


def add_what_if_options(p: Parser) -> None:
    p.add_argument(
        "--remedies",
        nargs="?",
        const="all",
        metavar="LIST",
        help="also measure memory remedies against the same baseline, each a fresh run hooked "
        "without editing the program: checkpoint,autocast,offload,accumulate,dtypes (default all)",
    )
    p.add_argument(
        "--accumulate",
        type=int,
        default=4,
        metavar="K",
        help="the accumulation remedy's steps per update (default 4): the program at the batch / K",
    )
    p.add_argument(
        "--predict-gpu",
        metavar="SIZE",
        help="predict the training step's GPU memory under fake tensors (no device, no data) and the "
        "largest value that fits a GPU of SIZE, e.g. 80GiB",
    )
    p.add_argument(
        "--what-if-at",
        type=int,
        metavar="N",
        help="the value the remedies and the prediction run at (default: the value the fit found)",
    )


def wanted(args: argparse.Namespace) -> bool:
    """Whether a what-if was asked; its options are checked here, before the fit's runs."""
    from memgauge._units import parse_bytes
    from memgauge.sweep import parse_remedies

    if args.remedies is not None:
        parse_remedies(args.remedies)
    if args.predict_gpu is not None:
        try:
            parse_bytes(args.predict_gpu)
        except ValueError:
            raise UsageError(f"--predict-gpu takes a size such as 80GiB, not {args.predict_gpu!r}") from None
    if args.accumulate < 2:
        raise UsageError("--accumulate takes 2 or more steps per update")
    return args.remedies is not None or args.predict_gpu is not None


def what_if_alone(args: argparse.Namespace, program: list[str]) -> None:
    """Without ``--budget``: no fit, the what-if runs alone at ``--what-if-at``."""
    if args.script and args.module:
        raise UsageError("give a script or -m MODULE, not both")
    if not args.script and not args.module:
        raise UsageError("nothing to run: give a script or -m MODULE")
    if not args.param or args.what_if_at is None:
        raise UsageError("without --budget, give the parameter and its value: --param NAME --what-if-at N")
    run_what_if(args, ["-m", args.module] if args.module else [args.script], program, None, None, alone=True)


def run_what_if(
    args: argparse.Namespace,
    target: list[str],
    program: list[str],
    found: int | None,
    budget: float | None,
    *,
    alone: bool = False,
) -> None:
    """Run what was asked, print it after the fit's report (``alone``: there is none), and add it to
    the ``--json`` record (``"remedies"``, ``"prediction"``). ``budget``: the resident budget
    (``rss=``), if any."""
    from memgauge import render
    from memgauge._units import parse_bytes
    from memgauge.runner import parse_target
    from memgauge.sweep import RemedyPlan, parse_remedies, predict_gpu, run_remedies

    value = args.what_if_at if args.what_if_at is not None else found
    if value is None:
        say("no value fits the budget: the remedies and the prediction need --what-if-at N\n")
        return
    run_target: Target = parse_target([*target, *program])
    added: dict[str, Any] = {}
    texts: list[str] = []
    # in the fit report's format: Markdown after a Markdown report, else laid out as the terminal's
    markdown = args.format == "md"
    width, color = terminal_width_color(args)
    if args.remedies is not None:
        plan = RemedyPlan(
            run_target,
            parse_remedies(args.remedies),
            parameter=args.param,
            value=value,
            accumulate=args.accumulate,
            budget_bytes=None if budget is None else int(budget),
            cwd=os.getcwd(),
        )
        table = run_remedies(plan, None if args.quiet else (lambda name: say(f"remedy run: {name}\n")))
        if markdown:
            texts.append(render.MarkdownRemediesRenderer().render(table))
        else:
            texts.append(render.TerminalRemediesRenderer(width, color).render(table))
        added["remedies"] = render.remedies_json(table)
    if args.predict_gpu is not None:
        try:
            size = parse_bytes(args.predict_gpu)
        except ValueError:
            raise UsageError(f"--predict-gpu takes a size such as 80GiB, not {args.predict_gpu!r}") from None
        prediction = predict_gpu(run_target, args.param, value, size, os.getcwd())
        if markdown:
            texts.append(render.MarkdownPredictionRenderer().render(prediction, args.param))
        else:
            texts.append(render.TerminalPredictionRenderer(width, color).render(prediction, args.param))
        added["prediction"] = render.prediction_json(prediction)
    if (args.format or "terminal") == "json":
        texts = []  # stdout holds the fit's JSON alone; the what-if figures go to --json
        if not args.json:
            say("the remedies and the prediction are written with --json PATH\n")
    _append(args, texts, added, after=not alone)
    if args.html and "remedies" in added and os.path.exists(args.html):
        _add_to_page(args.html, render.remedies_section(table))


def _append(args: argparse.Namespace, texts: list[str], added: dict[str, Any], *, after: bool) -> None:
    """The what-if texts after the fit's report (``after``), a blank line between (in Markdown, a
    line straight under a table would be a row of it), its figures into the fit's ``--json``
    record (each written just before, where asked)."""
    text = "\n".join(texts)
    if texts and after and args.output and os.path.exists(args.output):
        with open(args.output, encoding="utf-8") as f:
            text = f.read() + "\n" + text
    elif texts and after:
        text = "\n" + text
    if texts:
        emit(text, args.output)
    if args.json:
        record: dict[str, Any] = {}
        if os.path.exists(args.json):
            with open(args.json, encoding="utf-8") as f:
                record = json.load(f)
        record.update(added)
        write_output(args.json, json.dumps(record, indent=2, allow_nan=False) + "\n", "fit record")


def _add_to_page(path: str, section: str) -> None:
    """The remedy table as a section of the fit's HTML page, before its embedded data."""
    with open(path, encoding="utf-8") as f:
        page = f.read()
    anchor = '<script type="application/json" id="memgauge-data">'
    if anchor in page:
        write_output(path, page.replace(anchor, section + "\n" + anchor, 1), "HTML report")
