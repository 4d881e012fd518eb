"""CPU contention apart from waiting (issue 16, part 4): a line queued for a CPU behind another
process is not waiting for I/O. A real program pinned to one CPU with a CPU hog pinned to the same
one; the truth is the kernel's run delay that the program reads for itself in the same run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROGRAMS, run_memgauge

PROGRAM = PROGRAMS / "contention_pinned.py"


def _marked(tag: str) -> int:
    return next(n for n, text in enumerate(PROGRAM.read_text().splitlines(), 1) if f"# LINE: {tag}" in text)


@pytest.fixture
def hog() -> Iterator[int]:
    """A CPU-bound process pinned to one CPU; yields that CPU."""
    cpu = min(os.sched_getaffinity(0))
    code = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True:\n    pass\n"
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        yield cpu
    finally:
        proc.kill()
        proc.wait()


def _line(profile: dict[str, Any], line: int) -> dict[str, Any]:
    rows = [s for s in profile["lines"] if s["file"] == str(PROGRAM) and s["line"] == line]
    assert rows, [(s["file"], s["line"]) for s in profile["lines"]]
    return rows[0]


def test_time_queued_behind_a_hog_is_contention_not_waiting(tmp_path: Path, hog: int) -> None:
    truth_out = tmp_path / "truth.json"
    env = {"PIN_CPU": str(hog), "TRUTH_OUT": str(truth_out)}
    r = run_memgauge([str(PROGRAM)], tmp_path, env=env)
    assert r.returncode == 0 and r.profile is not None, r.stderr
    truth = json.loads(truth_out.read_text())
    # the set-up did what it says: the busy loop was queued for a good part of its wall time
    assert truth["queued"] >= 0.25 * truth["wall"], truth
    # the loop's lines together: read from outside, samples fall on the `while` line and on the
    # `pass` under it (the in-process sampler puts them all on the `while`)
    rows = [s for s in r.profile["lines"] if s["file"] == str(PROGRAM) and s["function"] == "busy"]
    assert rows, r.profile["lines"]
    busy = {k: sum(s[k] for s in rows) for k in ("contention_seconds", "wait_seconds")}
    # the sampled contention of the busy line is the kernel's run delay, within the sampling
    # error (a sample's interval can straddle the loop's start and end)
    assert abs(busy["contention_seconds"] - truth["queued"]) <= 0.25 * truth["queued"] + 0.05, (busy, truth)
    # and it is not waiting: before the split, the queued time was all wait_seconds
    assert busy["wait_seconds"] <= 0.25 * busy["contention_seconds"] + 0.05, busy
    sleep = _line(r.profile, _marked("sleep"))
    assert sleep["wait_seconds"] >= 0.4 and sleep["contention_seconds"] <= 0.1, sleep
    # the reports show it as a column of its own
    assert "contention" in r.stderr, r.stderr
