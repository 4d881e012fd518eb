"""The ``memgauge`` commands, one module each, in the order ``memgauge --help`` lists them.

Each implements ``cli._common.Command``: a name, its help texts, where the measured program's argv
begins (``program``), ``prepare_parser`` and ``run``. A new command is a new module here and one
line in ``_registry``; ``cli/_main.py`` needs no change. Lazy: a command's module loads when it is
used (``command_named``), so ``memgauge run`` starts the program without loading the others.
"""

from __future__ import annotations

from memgauge._lazy import attach

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.cli.commands._registry import COMMAND_NAMES, PROGRAM_COMMANDS, all_commands, command_named
    from memgauge.cli.commands.check import CheckCommand
    from memgauge.cli.commands.compare import CompareCommand
    from memgauge.cli.commands.fit import FitCommand
    from memgauge.cli.commands.fit_limit import FitLimitCommand
    from memgauge.cli.commands.machine import MachineCommand
    from memgauge.cli.commands.manage import PolicyCommand, TokenCommand
    from memgauge.cli.commands.plan import PlanCommand
    from memgauge.cli.commands.run import RunCommand
    from memgauge.cli.commands.serve import ServeCommand
    from memgauge.cli.commands.submit import SubmitCommand
    from memgauge.cli.commands.sweep import SweepCommand
    from memgauge.cli.commands.view import ViewCommand


_NAMES = {
    "PlanCommand": "plan",
    "COMMAND_NAMES": "_registry",
    "PROGRAM_COMMANDS": "_registry",
    "all_commands": "_registry",
    "command_named": "_registry",
    "CheckCommand": "check",
    "CompareCommand": "compare",
    "FitCommand": "fit",
    "FitLimitCommand": "fit_limit",
    "MachineCommand": "machine",
    "PolicyCommand": "manage",
    "RunCommand": "run",
    "ServeCommand": "serve",
    "SubmitCommand": "submit",
    "SweepCommand": "sweep",
    "TokenCommand": "manage",
    "ViewCommand": "view",
}
__all__ = [
    "COMMAND_NAMES",
    "PROGRAM_COMMANDS",
    "CheckCommand",
    "CompareCommand",
    "FitCommand",
    "FitLimitCommand",
    "MachineCommand",
    "PlanCommand",
    "PolicyCommand",
    "RunCommand",
    "ServeCommand",
    "SubmitCommand",
    "SweepCommand",
    "TokenCommand",
    "ViewCommand",
    "all_commands",
    "command_named",
]
__getattr__, __dir__ = attach(__name__, _NAMES)
