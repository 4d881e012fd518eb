"""The ``memgauge`` commands, one module each, in the order ``memgauge --help`` lists them.

Each implements ``cli._common.Command``: a name, its help texts, where the measured program's argv
begins (``program``), ``prepare_parser`` and ``run``. A new command is a new module here and one
line in ``COMMANDS``; ``cli/_main.py`` needs no change.
"""

from memgauge.cli.commands.check import CheckCommand
from memgauge.cli.commands.compare import CompareCommand
from memgauge.cli.commands.fit import FitCommand
from memgauge.cli.commands.fit_limit import FitLimitCommand
from memgauge.cli.commands.manage import PolicyCommand, TokenCommand
from memgauge.cli.commands.run import RunCommand
from memgauge.cli.commands.serve import ServeCommand
from memgauge.cli.commands.submit import SubmitCommand
from memgauge.cli.commands.sweep import SweepCommand
from memgauge.cli.commands.view import ViewCommand

__all__ = [
    "COMMANDS",
    "CheckCommand",
    "CompareCommand",
    "FitCommand",
    "FitLimitCommand",
    "PolicyCommand",
    "RunCommand",
    "ServeCommand",
    "SubmitCommand",
    "SweepCommand",
    "TokenCommand",
    "ViewCommand",
]

COMMANDS = (
    RunCommand(),
    ViewCommand(),
    CompareCommand(),
    CheckCommand(),
    FitLimitCommand(),
    FitCommand(),
    SweepCommand(),
    ServeCommand(),
    SubmitCommand(),
    PolicyCommand(),
    TokenCommand(),
)
