"""``memgauge run``: run a program under measurement and report it; exit with the program's code."""

from __future__ import annotations

import argparse

from memgauge.cli._common import Program, program_exit_code, run_options
from memgauge.cli._parser import Parser
from memgauge.cli._run_plan import RunPlan


class RunCommand:
    name = "run"
    summary = "run a program under measurement"
    usage: str | None = "memgauge run [options] (script.py | -m module | -- command) [args ...]"
    description = (
        "Run a program in a child process and report the resident peak of its whole process "
        "tree, its time, its phases and its processes. The report goes to stderr; the "
        "program's stdin, stdout, stderr and exit code are its own."
    )
    examples: tuple[str, ...] = (
        "memgauge run train.py --epochs 3  # measure a script; its own options follow it",
        "memgauge run --json run.json --html run.html -m mypkg.tool  # a module; the profile and its page",
        "memgauge run -- ./build.sh  # any command, its process tree measured",
    )
    program: Program = "target"

    def prepare_parser(self, parser: Parser) -> None:
        run_options(parser)
        parser.add_argument(
            "--tensorboard",
            metavar="DIR",
            help="also write the throughput and memory figures as TensorBoard scalars to DIR "
            "(needs the tensorboard extra; docs/training.md)",
        )
        # how the sweep jobs and the sandbox run untrusted code: a plan only they write, so not an
        # option for people, and kept out of --help
        parser.add_argument("--sandbox", metavar="PLAN.json", help=argparse.SUPPRESS)

    def run(self, args: argparse.Namespace, program: list[str]) -> int:
        profile = RunPlan(args, program).run()
        return program_exit_code(profile.exit.code, profile.exit.signal)
