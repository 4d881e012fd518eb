"""``memgauge view``: report a saved profile in the terminal, as markdown or JSON, or as HTML."""

from __future__ import annotations

import argparse

from memgauge._files import write_output
from memgauge.cli._common import Program, emit, load_profile, report_options, report_target, say
from memgauge.cli._formats import FORMATS, PAGE, Look, need
from memgauge.cli._parser import Parser


class ViewCommand:
    name = "view"
    summary = "report a saved profile"
    usage: str | None = "memgauge view [options] PROFILE.json"
    description = (
        "Report a profile written by 'memgauge run': in the terminal, as markdown or JSON, "
        "or as an HTML file."
    )
    examples: tuple[str, ...] = (
        "memgauge view run.json  # the report again, in the terminal",
        "memgauge view run.json --format md -o report.md  # as markdown, for a pull request",
        "memgauge view run.json --html report.html  # one offline HTML page",
    )
    program: Program = "none"

    def prepare_parser(self, parser: Parser) -> None:
        parser.add_argument("profile", metavar="PROFILE.json")
        report_options(parser, "profile")
        parser.add_argument("--lines", type=int, default=8, metavar="N", help="lines per table (default 8)")

    def run(self, args: argparse.Namespace, program: list[str]) -> int:
        fmt, width, color = report_target(args, [args.profile])
        profile = load_profile(args.profile)
        if args.html:
            write_output(args.html, need(PAGE.profile, "html")(profile, Look()), "HTML report")
            say(f"report: {args.html}\n")
        if fmt is None:
            return 0
        text = need(FORMATS[fmt].profile, fmt)(profile, Look(width, color, args.lines))
        emit(text if text.endswith("\n") else text + "\n", args.output)
        return 0
