"""Whether a sweep's or a fit's parameters reached the program, from the record its run left
(``environment.knobs``, see ``capture._knobs``): a parameter the program never read is refused
with one line, rather than swept into a flat "constant" law."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from memgauge._errors import UsageError
from memgauge.capture import knobs_request
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
