"""Whether a sweep's or a fit's parameters reached the program, from the record its run left
(``environment.knobs``, see ``capture._knobs``): a parameter the program never read is refused
with one line, rather than swept into a flat "constant" law."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from memgauge._errors import UsageError
from memgauge.capture import knobs_request, top_level_assignments
from memgauge.model import Value


def knob_env(point: Mapping[str, Value], templates: Iterable[str], argv: Iterable[str]) -> dict[str, str]:
    """The environment entry that asks a run to record how the point's parameters reach it."""
    return knobs_request(point, templates, argv)


def unreached(profile: Mapping[str, Any], names: Iterable[str]) -> list[str]:
    """Which of ``names`` the run's record says never reached the program; empty when the run
    left no record (a command that is not Python, a profile of an older memgauge): then nothing
    is known, and nothing is refused."""
    knobs = (profile.get("environment") or {}).get("knobs")
    if not isinstance(knobs, dict):
        return []
    return [n for n in names if isinstance(knobs.get(n), dict) and not knobs[n].get("reached")]


def check_reached(profile: Mapping[str, Any], names: Iterable[str]) -> None:
    """Raise ``UsageError`` (one line) when a parameter in ``names`` never reached the program."""
    missing = unreached(profile, names)
    if missing:
        listed = ", ".join(missing)
        templates = ", ".join("{" + n + "}" for n in missing)
        raise UsageError(
            f"--param {listed} never reached the program: it read no such environment variable, "
            f"assigns no such module-level constant, and got no {templates} argument"
        )


def program_value(target: list[str], parameter: str, environ: Mapping[str, str]) -> int | None:
    """The program's own value of ``parameter``, where it can be read before any run: an integer
    the script assigns it at its top level (``BATCH_SIZE = 64``, the constant a fit replaces), else
    an integer in ``environ`` (the variable the program would read run directly). None otherwise
    (a module, a value from an argument or computed): the search then starts at ``--min``."""
    if target and target[0] != "-m":
        found = _script_constant(target[0], parameter)
        if found is not None:
            return found
    try:
        value = int(environ.get(parameter, ""))
    except ValueError:
        return None
    return value


def _script_constant(path: str, name: str) -> int | None:
    import ast

    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError, ValueError):
        return None
    found: int | None = None
    for target, node in top_level_assignments(tree):
        if target == name:
            literal = node.value.value if isinstance(node.value, ast.Constant) else None
            # the last assignment is the one the program runs with, as in the knob's replacement
            found = literal if type(literal) is int else None
    return found
