"""Events from measured processes to the runner.

Each process appends JSON lines to its own file ``events.<pid>.jsonl`` in the directory named by
``MEMGAUGE_EVENTS_DIR``. One ``os.write`` per event on an ``O_APPEND`` descriptor: nothing is
buffered in the process, so a process killed by SIGKILL or the OOM killer loses no event it wrote.
A forked child notices its new pid and opens its own file.

Times are ``time.monotonic()``, which on Linux is one clock for every process on the machine.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

ENV_EVENTS_DIR = "MEMGAUGE_EVENTS_DIR"


class EventWriter:
    def __init__(self, directory: str) -> None:
        self._dir = directory
        self._pid = -1
        self._fd = -1

    def write(self, event: dict[str, Any]) -> None:
        pid = os.getpid()
        if pid != self._pid:
            self._pid = pid
            self._fd = os.open(
                os.path.join(self._dir, f"events.{pid}.jsonl"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600
            )
        event["pid"] = pid
        os.write(self._fd, (json.dumps(event, separators=(",", ":")) + "\n").encode())


def read_events(directory: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every event written under ``directory``, ordered by time. A torn last line (a process killed
    in the middle of a write) is skipped, not fatal."""
    events: list[dict[str, Any]] = []
    for path in sorted(Path(directory).glob("events.*.jsonl")):
        for line in path.read_bytes().splitlines():
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if isinstance(ev, dict) and "ev" in ev:
                events.append(ev)
    events.sort(key=lambda e: float(e.get("t", 0.0)))
    return events
