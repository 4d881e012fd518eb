"""``memgauge`` command line: ``main(argv) -> int``.

The commands live in ``cli/commands/``, one module each: ``run`` (measure a program), ``view``
(report a saved profile), ``compare`` (profiles side by side), ``check`` (judge a run or profiles
against budgets), ``sweep`` (run a program at many sizes), ``serve`` (the validation service),
``submit`` (send a program to it). This module picks the command, builds its parser, splits its argv
and runs it inside ``_common.guarded``, which maps every error to its exit code (the table is in
``_common``'s docstring).
"""

from __future__ import annotations

import sys

from memgauge._errors import UsageError
from memgauge._version import __version__
from memgauge.cli._common import build_parser, guarded, split_argv
from memgauge.cli._parser import Parser
from memgauge.cli.commands import all_commands, command_named


def main(argv: list[str] | None = None) -> int:
    # argv None: memgauge's own process, started for this command (its start-up is then timed)
    own_process = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    code = guarded(lambda: _dispatch(argv, own_process))
    if own_process:
        # the command is done and its process about to exit: the interpreter's last collection
        # would walk every object the command made (3-8 ms after every run, the program's wait)
        # to free what the exit frees anyway. Frozen objects are left to it.
        import gc

        gc.freeze()
    return code


def _dispatch(argv: list[str], own_process: bool = False) -> int:
    command = command_named(argv[0]) if argv else None
    if command is None:
        if not argv:
            raise UsageError("give a command, e.g. 'memgauge run script.py' (see 'memgauge --help')")
        _top_parser().parse_args(argv)  # --help, --version, or the error naming the choices
        raise UsageError("give a command, e.g. 'memgauge run script.py'")
    parser = build_parser(command)
    own, program = split_argv(parser, argv[1:], command.program)
    args = parser.parse_args(own)
    args.own_process = own_process
    return command.run(args, program)


def _top_parser() -> Parser:
    p = Parser(
        prog="memgauge",
        description="How much memory and time a program needs, and where it goes.",
        epilog="Run 'memgauge COMMAND --help' for a command's options.",
    )
    p.add_argument("--version", action="version", version=f"memgauge {__version__}")
    commands = all_commands()
    p.add_argument(
        "command",
        choices=[command.name for command in commands],
        help="; ".join(f"{command.name}: {command.summary}" for command in commands),
    )
    return p
