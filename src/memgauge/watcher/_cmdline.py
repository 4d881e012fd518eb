"""The command lines the watchers keep of the processes they see: bounded each and all together,
and shown as the user would have run them (without memgauge's bootstrap)."""

from __future__ import annotations

from memgauge.capture import bootstrap_args

# what memgauge keeps of one process's command line, and of all of them together, in characters: a
# program starting hundreds of children with megabyte command lines would otherwise swell
# memgauge's own memory (no limit of the run's bounds it) and the profile
MAX_CMDLINE_CHARS = 4096
MAX_CMDLINES_CHARS = 1 << 20
# what is kept of a process's command line once the total is spent
MIN_CMDLINE_CHARS = 256


def bounded_cmdline(cmdline: list[str], limit: int = MAX_CMDLINE_CHARS) -> list[str]:
    """``cmdline`` cut to at most ``limit`` characters (arguments' own), the cut said in its last
    argument."""
    out: list[str] = []
    used = 0
    for i, arg in enumerate(cmdline):
        if used + len(arg) <= limit:
            out.append(arg)
            used += len(arg)
            continue
        room = max(0, limit - used)
        cut = sum(len(a) for a in cmdline[i:]) - room
        out.append(f"{arg[:room]}...[{cut} more characters]")
        break
    return out


class CmdlineBudget:
    """The command lines a watcher keeps: each at most ``MAX_CMDLINE_CHARS``, all together about
    ``MAX_CMDLINES_CHARS`` (past it, ``MIN_CMDLINE_CHARS`` each)."""

    def __init__(self) -> None:
        self.used = 0

    def keep(self, cmdline: list[str]) -> list[str]:
        limit = max(MIN_CMDLINE_CHARS, min(MAX_CMDLINE_CHARS, MAX_CMDLINES_CHARS - self.used))
        kept = bounded_cmdline(cmdline, limit)
        self.used += sum(len(a) for a in kept)
        return kept


def user_cmdline(cmdline: list[str] | None) -> list[str] | None:
    """The command line without memgauge's bootstrap, as the user would have run it."""
    args = bootstrap_args(cmdline) if cmdline else None
    if cmdline and args is not None and len(args) >= 2:
        kind, rest = args[0], args[1:]
        return [cmdline[0], *(["-m"] if kind == "module" else []), *rest]
    return cmdline
