"""``memgauge.record``: program metrics reach the profile, under ``memgauge run`` and in-process."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import memgauge
from memgauge.capture._record import metrics_from_events
from tests.conftest import run_memgauge

PROGRAM = """
import os, memgauge
memgauge.record("batches", 1)
memgauge.record("batches", 3)          # the last value counts
pids = []
for k in range(2):
    pid = os.fork()
    if pid == 0:
        memgauge.record("items", 5 + k)    # each worker its own count: summed
        os._exit(0)
    pids.append(pid)
for pid in pids:
    os.waitpid(pid, 0)
"""


def test_run_keeps_the_last_value_per_process_summed_over_processes(tmp_path: Path) -> None:
    script = tmp_path / "rec.py"
    script.write_text(PROGRAM)
    result = run_memgauge([str(script)], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.profile is not None
    assert result.profile["metrics"] == {"batches": 3.0, "items": 11.0}


def test_in_process_profile_gets_what_was_recorded_inside_the_block() -> None:
    memgauge.record("before", 1)  # outside any measurement: kept nowhere, no error
    with memgauge.profile(lines=False) as p:
        memgauge.record("rows", 10)
        memgauge.record("rows", 12.5)
    memgauge.record("after", 1)
    assert p.profile is not None
    assert p.profile.metrics == {"rows": 12.5}


@pytest.mark.parametrize(
    ("name", "value", "error"),
    [
        ("", 1, TypeError),
        (3, 1, TypeError),
        ("x", "1", TypeError),
        ("x", True, TypeError),
        ("x", math.nan, ValueError),
    ],
)
def test_bad_values_are_refused(name: object, value: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        memgauge.record(name, value)  # type: ignore[arg-type]


def test_metrics_from_events_ignores_malformed_events() -> None:
    events = [
        {"ev": "metric", "name": "a", "value": 1, "pid": 1, "t": 0},
        {"ev": "metric", "name": "a", "value": 2, "pid": 1, "t": 1},
        {"ev": "metric", "name": "a", "value": 4, "pid": 2, "t": 2},
        {"ev": "metric", "name": 5, "value": 4, "pid": 2, "t": 2},
        {"ev": "metric", "name": "b", "value": "x", "pid": 2, "t": 2},
        {"ev": "phase_start", "name": "a", "pid": 2, "t": 2},
    ]
    assert metrics_from_events(events) == {"a": 6.0}
