"""Old spellings the command line still reads, each with one line of warning: an option renamed
(``sweep --workers`` is ``--worker-param``) or a value renamed (``check --format text`` is
``--format terminal``)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from memgauge._errors import UsageError
from memgauge.cli._common import say


def renamed_option(args: argparse.Namespace, command: str, old: str, new: str, metavar: str) -> None:
    """An option read under its old spelling: its value moves to the new one's destination, with one
    line of warning. The old option's destination is the new one's prefixed with ``old_``."""
    dest = new.lstrip("-").replace("-", "_")
    value = getattr(args, "old_" + dest)
    if value is None:
        return
    if getattr(args, dest) is not None:
        raise UsageError(f"give {new} only ({old} is its old spelling)")
    say(f"memgauge: warning: {command} {old} {metavar} is deprecated: use {new} {metavar}\n")
    setattr(args, dest, value)


def renamed_value(option: str, renamed: dict[str, str]) -> Callable[[str], str]:
    """An argparse ``type`` for an option whose values were renamed: an old value is read as its new
    one, with one line of warning (``check --format text`` is ``--format terminal`` now)."""

    def convert(value: str) -> str:
        new = renamed.get(value)
        if new is None:
            return value
        say(f"memgauge: warning: {option} {value} is deprecated: use {option} {new}\n")
        return new

    return convert
