"""Which module holds each command, in the order ``memgauge --help`` lists them, and the commands
themselves, loaded only as they are asked for: ``memgauge run`` loads the run command alone, not
the service client, the sweep and the rest (each command's module imports what it needs)."""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.cli._common import Command

# command name -> (module in this package, class)
_WHERE = {
    "run": ("run", "RunCommand"),
    "view": ("view", "ViewCommand"),
    "compare": ("compare", "CompareCommand"),
    "check": ("check", "CheckCommand"),
    "fit-limit": ("fit_limit", "FitLimitCommand"),
    "fit": ("fit", "FitCommand"),
    "sweep": ("sweep", "SweepCommand"),
    "plan": ("plan", "PlanCommand"),
    "serve": ("serve", "ServeCommand"),
    "submit": ("submit", "SubmitCommand"),
    "policy": ("manage", "PolicyCommand"),
    "machine": ("machine", "MachineCommand"),
    "token": ("manage", "TokenCommand"),
}
COMMAND_NAMES = tuple(_WHERE)
# the commands whose ``program`` is "target": they run it, in a memgauge cgroup made for the run
# before their parser is built (``cli._ahead``)
PROGRAM_COMMANDS = ("run", "check", "fit-limit")


def command_named(name: str) -> Command | None:
    """The command called ``name`` (its module loaded now), None when there is none."""
    where = _WHERE.get(name)
    if where is None:
        return None
    module = importlib.import_module(f"memgauge.cli.commands.{where[0]}")
    command: Command = getattr(module, where[1])()
    return command


def all_commands() -> tuple[Command, ...]:
    """Every command, in ``--help``'s order (every module loaded)."""
    found = [command_named(name) for name in COMMAND_NAMES]
    return tuple(c for c in found if c is not None)
