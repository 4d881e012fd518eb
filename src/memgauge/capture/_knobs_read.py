"""The runner's side of knobs (``_knobs``): the request a run's environment carries, and what the
measured processes recorded, read back for the profile."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping

from memgauge._env import ENV_KNOBS
from memgauge.capture._knobs import ASKED_FILE, KNOBS_FILE
from memgauge.capture._wire import open_record

TYPE_CHECKING = False  # not typing's: a run imports no typing (docs/benchmarks.md)
if TYPE_CHECKING:
    from typing import Any

KNOB_KINDS = ("constant", "env", "argument")
_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def knobs_request(
    params: Mapping[str, object], templated: Iterable[str], argv: Iterable[str]
) -> dict[str, str]:
    """The environment entry that asks a run to record how ``params`` reach it. ``templated``: the
    argument templates (``{NAME}`` in them puts NAME in the program's arguments); ``argv``: the
    program's arguments as expanded (the text the value became there)."""
    named = {m for t in templated for m in _FIELD.findall(t)}
    tokens = list(argv)
    arguments: dict[str, str] = {}
    for name in params:
        if name in named:
            text = str(params[name]) if not isinstance(params[name], float) else repr(params[name])
            if any(text in t for t in tokens):
                arguments[name] = text
    return {ENV_KNOBS: json.dumps({"params": dict(params), "args": arguments})}


def read_knobs(events_dir: str) -> dict[str, dict[str, Any]] | None:
    """``{NAME: {"value": asked, "reached": [kinds]}}`` for each parameter the run was asked to
    record, ``reached`` in the order of ``KNOB_KINDS`` (empty: it never reached the program); None
    when no process recorded a request (no knobs asked, or no Python process of memgauge's ran)."""
    try:
        with open_record(os.path.join(events_dir, ASKED_FILE)) as f:
            asked = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(asked, dict) or not isinstance(asked.get("params"), dict):
        return None
    reached: dict[str, set[str]] = {str(n): set() for n in asked["params"]}
    try:
        with open_record(os.path.join(events_dir, KNOBS_FILE)) as f:
            lines = f.readlines()
    except OSError:
        lines = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line cut by a process killed mid-write
        if isinstance(entry, dict) and entry.get("name") in reached and entry.get("kind") in KNOB_KINDS:
            reached[entry["name"]].add(entry["kind"])
    return {
        name: {"value": asked["params"][name], "reached": [k for k in KNOB_KINDS if k in kinds]}
        for name, kinds in reached.items()
    }
