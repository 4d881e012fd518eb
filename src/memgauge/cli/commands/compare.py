"""``memgauge compare``: profiles side by side, deltas and ratios against the first."""

from __future__ import annotations

import argparse
import os

from memgauge._errors import UsageError
from memgauge._files import write_output
from memgauge.cli._common import Program, emit, load_profile, report_options, report_target, say
from memgauge.cli._formats import FORMATS, PAGE, RECORD_SUFFIX, Look, need
from memgauge.cli._parser import Parser


class CompareCommand:
    name = "compare"
    summary = "profiles side by side"
    usage: str | None = "memgauge compare [options] BASELINE.json OTHER.json [...]"
    description = (
        "Profiles side by side: peaks, time, per-phase peaks and durations, the lines holding "
        "the peak. Deltas and ratios are against the first profile."
    )
    examples: tuple[str, ...] = (
        "memgauge compare main.json branch.json  # deltas and ratios against the first",
        "memgauge compare a.json b.json c.json --names base,fp16,ckpt  # named columns",
        "memgauge compare main.json branch.json --format md -o diff.md",
    )
    program: Program = "none"

    def prepare_parser(self, parser: Parser) -> None:
        parser.add_argument("profiles", nargs="+", metavar="PROFILE.json")
        parser.add_argument(
            "--names", metavar="A,B,...", help="column names, comma-separated (default: the file names)"
        )
        report_options(parser, "comparison")
        parser.add_argument("--lines", type=int, default=10, metavar="N", help="lines compared (default 10)")

    def run(self, args: argparse.Namespace, program: list[str]) -> int:
        if len(args.profiles) < 2:
            raise UsageError("compare needs at least two profiles")
        fmt, width, color = report_target(args, args.profiles)
        if args.names is not None:
            names = [n.strip() for n in args.names.split(",")]
            if len(names) != len(args.profiles) or not all(names):
                raise UsageError(f"--names needs {len(args.profiles)} non-empty names, one per profile")
            if len(set(names)) != len(names):
                raise UsageError("--names must differ: the columns could not be told apart")
        else:
            names = _default_names(args.profiles)
        profiles = [load_profile(path) for path in args.profiles]
        from memgauge.analysis import compare

        comparison = compare(profiles, names, max_lines=args.lines)
        if args.html:
            write_output(args.html, need(PAGE.comparison, "html")(comparison, Look()), "HTML report")
            say(f"report: {args.html}\n")
        if fmt is None:
            return 0
        emit(need(FORMATS[fmt].comparison, fmt)(comparison, Look(width, color)), args.output)
        return 0


def _default_names(paths: list[str]) -> list[str]:
    """File names without .json; the whole path where two files share a name."""
    stems = [os.path.basename(p).removesuffix(RECORD_SUFFIX) for p in paths]
    return stems if len(set(stems)) == len(stems) else list(paths)
