"""memgauge's start-up is timed from its process's start, which the kernel keeps across exec: a
process that ran something else first (a shell script's ``exec``) is not timed from then."""

from __future__ import annotations

import os
import time

import pytest

from memgauge.runner import process_started


def _boot_time_started() -> float:
    """This process's start on the boot-time clock, as /proc/self/stat gives it."""
    with open("/proc/self/stat", "rb") as f:
        stat = f.read()
    return int(stat[stat.rindex(b")") + 2 :].split()[19]) / os.sysconf("SC_CLK_TCK")


def test_a_process_that_began_as_memgauge_is_timed_from_its_start(monkeypatch: pytest.MonkeyPatch) -> None:
    # the process seen 0.2 s after its start, as memgauge's command begins
    seen = _boot_time_started() + 0.2
    monkeypatch.setattr(time, "clock_gettime", lambda clock: seen if clock == time.CLOCK_BOOTTIME else 0.0)
    started = process_started()
    assert started is not None
    assert time.monotonic() - started == pytest.approx(0.2, abs=0.05)


def test_a_process_that_exec_d_after_seconds_of_other_work_is_not_timed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    boot = time.clock_gettime(time.CLOCK_BOOTTIME)
    # the same process seen 10 s later: it ran something for 10 s before memgauge began
    monkeypatch.setattr(
        time, "clock_gettime", lambda clock: boot + 10.0 if clock == time.CLOCK_BOOTTIME else 0.0
    )
    assert process_started() is None
