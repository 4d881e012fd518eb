"""Command line: ``main(argv) -> int``."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """``memgauge ARGV``'s exit code; ``argv`` None: ``sys.argv``'s, in memgauge's own process,
    started for this command (its start-up then timed, and a run's cgroup made before the parser
    loads: ``_ahead``)."""
    from memgauge.cli._ahead import discard_ahead, group_ahead

    ahead = argv is None and group_ahead(sys.argv[1:])
    try:
        from memgauge.cli._main import main as command_main

        return command_main(argv)
    finally:
        if ahead:
            discard_ahead()


__all__ = ["main"]
