"""Reading the events the measured processes wrote (``events.<pid>.jsonl``, see ``_wire``).

Runs in the runner, after the program: every event is checked against the wire format, and an
event that does not pass (a line cut short, an unknown version or kind, a missing field) is dropped
with a warning naming its file.
"""

from __future__ import annotations

import json
import os

from memgauge.capture._wire import EVENTS, event_problem, open_record, pid_of
from memgauge.model import CaptureWarning

TYPE_CHECKING = False  # not typing's: a run imports no typing (docs/benchmarks.md)
if TYPE_CHECKING:
    from typing import Any


def read_events(
    directory: str | os.PathLike[str], *, warnings: list[CaptureWarning] | None = None
) -> list[dict[str, Any]]:
    """Every well-formed event written under ``directory``, ordered by time. What was dropped is
    appended to ``warnings`` (the profile's; None only where no profile is made): one entry per
    file, with the first reason and how many events it cost."""
    events: list[dict[str, Any]] = []
    names = sorted(n for n in os.listdir(directory) if pid_of(n, EVENTS) is not None)
    for name in names:
        try:
            with open_record(os.path.join(directory, name), binary=True) as f:
                lines = f.read().splitlines()
        except OSError as e:
            _warn(warnings, name, f"unreadable ({e.strerror or e}): every event of this process is missing")
            continue
        dropped = 0
        first = ""
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except ValueError:
                why: str | None = "not JSON (a write cut short)"
            else:
                why = event_problem(event)
            if why is None:
                events.append(event)
                continue
            dropped += 1
            first = first or f"line {number}: {why}"
        if dropped:
            _warn(warnings, name, f"{dropped} of its events dropped, the first at {first}")
    events.sort(key=lambda e: float(e["t"]))
    return events


def _warn(warnings: list[CaptureWarning] | None, name: str, message: str) -> None:
    if warnings is not None:
        warnings.append(CaptureWarning(name, message))
