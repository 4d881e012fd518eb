"""Command line: ``main(argv) -> int``."""

from memgauge.cli._main import main

__all__ = ["main"]
