"""``memgauge.record(name, value)``: numbers the program reports about its own work.

Items processed, rows read, tokens generated: what a time or a peak is divided by. Under
``memgauge run`` (and ``sweep``) each call is an event to the runner, which keeps the last value per
process and sums over processes, so a pool of workers that each record their own count adds up.
Inside ``memgauge.profile()`` the values recorded while the block is open land in its profile.
Outside both, a call costs a dictionary lookup and nothing is kept.

Imported by measured programs, so it imports neither ``typing`` nor ``dataclasses`` at run time.
"""

from __future__ import annotations

import math
import os
import threading
import time

from memgauge._env import ENV_EVENTS_DIR
from memgauge.capture._events import EventWriter
from memgauge.capture._wire import EV_METRIC

_writer: EventWriter | None = None
_checked_pid = -1
_lock = threading.Lock()
# the metrics dicts of the memgauge.profile() blocks open now
_listeners: list[dict[str, float]] = []


def record(name: str, value: float) -> None:
    """Record the program metric ``name`` (e.g. ``"items"``) as ``value``. A later call with the same
    name replaces the value; use a running total for counts."""
    if not isinstance(name, str) or not name:
        raise TypeError("memgauge.record: name must be a non-empty string")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"memgauge.record: value must be a number, not {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"memgauge.record: value must be finite, not {value!r}")
    writer = _event_writer()
    if writer is not None:
        writer.write({"ev": EV_METRIC, "t": time.monotonic(), "name": name, "value": number})
    for metrics in _listeners:
        metrics[name] = number


def _event_writer() -> EventWriter | None:
    global _writer, _checked_pid
    pid = os.getpid()
    if _checked_pid != pid:
        with _lock:
            if _checked_pid != pid:
                directory = os.environ.get(ENV_EVENTS_DIR)
                _writer = EventWriter(directory) if directory and os.path.isdir(directory) else None
                _checked_pid = pid
    return _writer


def listen_metrics(metrics: dict[str, float]) -> None:
    _listeners.append(metrics)


def unlisten_metrics(metrics: dict[str, float]) -> None:
    for i, m in enumerate(_listeners):
        if m is metrics:
            del _listeners[i]
            return


def metrics_from_events(events: list[dict[str, object]]) -> dict[str, float]:
    """The run's metrics from the runner's events (in time order): the last value of each process,
    summed over processes."""
    last: dict[tuple[str, int], float] = {}
    for ev in events:
        if ev.get("ev") != EV_METRIC:
            continue
        name, value, pid = ev.get("name"), ev.get("value"), ev.get("pid")
        if isinstance(name, str) and isinstance(value, (int, float)) and isinstance(pid, int):
            last[(name, pid)] = float(value)
    totals: dict[str, float] = {}
    for (name, _), value in last.items():
        totals[name] = totals.get(name, 0.0) + value
    return totals
