"""The commands' argument parser: argparse's, with its mistakes as ``UsageError``s and a help
formatter that reads the terminal's width without shutil."""

from __future__ import annotations

import argparse
import os
import sys

from memgauge._errors import InternalError, UsageError

TYPE_CHECKING = False  # not typing's: every command loads this before it starts the program
if TYPE_CHECKING:
    from typing import Any


def _columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` reads it (``COLUMNS``, then stdout's
    terminal, else 80), without importing shutil."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Formatter(argparse.HelpFormatter):
    """argparse's own, given the width it would read with shutil: argparse makes a formatter for
    every option it adds, and shutil (with zlib, bz2 and lzma) costs ~2 ms to import before the
    measured program starts."""

    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
    ) -> None:
        super().__init__(
            prog, indent_increment, max_help_position, _columns() - 2 if width is None else width
        )


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose mistakes are ``UsageError``s: one line and exit 64, from
    ``guarded`` like every other error, instead of argparse's usage block and exit 2."""

    examples: tuple[str, ...] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)

    def format_help(self) -> str:
        """argparse's help, then the command's examples, each under its comment (argparse would
        re-wrap an epilog's lines)."""
        text = super().format_help()
        if not self.examples:
            return text
        lines = []
        for example in self.examples:
            command, _, what = example.partition("  # ")
            lines += [f"  # {what}", f"  {command}"] if what else [f"  {command}"]
        return text + "\nexamples:\n" + "\n".join(lines) + "\n"

    def values_taken(self) -> dict[str, int]:
        """How many values follow each option string (0: a flag), read from the parser's actions
        so that a new option is known to the argv split the moment it is added."""
        out: dict[str, int] = {}
        for action in self._actions:
            if not action.option_strings:
                continue  # a positional: it is where the split stops
            nargs = action.nargs
            if nargs is None:
                n = 1
            elif isinstance(nargs, int):
                n = nargs
            else:
                # "?", "*", "+": where its values end is a guess, and a wrong guess would hand the
                # program's first argument to memgauge (or the reverse)
                raise InternalError(f"option {action.option_strings} takes a variable number of values")
            for option in action.option_strings:
                out[option] = n
        return out
