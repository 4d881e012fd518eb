"""What a command that runs a program does first, before its parser is built (argparse and the
command's module imported, its options parsed): the run's memory cgroup is made, and the kernel's
wait for the program's first process to join it begins (``runner``'s ``make_group_ahead``), so that
it passes while they load."""

from __future__ import annotations

from memgauge.cli.commands import PROGRAM_COMMANDS


def group_ahead(argv: list[str]) -> bool:
    """Whether the run's memory cgroup was made now for ``memgauge ARGV``: for a command that runs
    a program, not where the command line turns the cgroup off or sandboxes the program (a
    program's own such option too: that run is only slower)."""
    if not argv or argv[0] not in PROGRAM_COMMANDS:
        return False
    prefer = "auto"
    for i, token in enumerate(argv):
        if token == "--sandbox" or token.startswith("--sandbox="):
            return False
        if token.startswith("--cgroup="):
            prefer = token.partition("=")[2]
        elif token == "--cgroup" and i + 1 < len(argv):
            prefer = argv[i + 1]
    if prefer not in ("auto", "v2", "v1"):
        return False
    from memgauge.runner import make_group_ahead

    make_group_ahead(prefer)
    return True


def discard_ahead() -> None:
    """Remove what ``group_ahead`` made and no run took."""
    from memgauge.runner import discard_group_ahead

    discard_group_ahead()
