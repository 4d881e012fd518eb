"""What measuring cost (``Profile.overhead``): the steps are built from the points the runner and
the measured process timed, each step a difference of two of them; the record round-trips; the
terminal report's footer says it; a part of memgauge's own CPU reported by several processes is
summed."""

from __future__ import annotations

import pytest

from memgauge.analysis import overhead_summary
from memgauge.model import Overhead, OwnCpu, Profile
from memgauge.render import TerminalRenderer
from memgauge.runner._overhead import overhead_of
from memgauge.runner._state import RunState
from tests.factories import legacy_profile, make_profile


def test_each_step_is_the_span_between_two_timed_points() -> None:
    state = RunState(100)
    # the measured process's own clock readings: first line at 10.30, last returned at 12.30
    state.program_times = {"started": 10.30, "ended": 12.30}
    state.own_cpu = [("line sampler thread", 100, 0.02), ("line sampler thread", 101, 0.01)]
    overhead = overhead_of(
        state, process_start=10.0, entered=10.15, spawned=10.20, reaped=12.40, assembled=12.45, cpu_before=9.0
    )
    assert overhead.steps == pytest.approx(
        {"start-up": 0.15, "set-up": 0.05, "bootstrap": 0.10, "shutdown": 0.10, "assembly": 0.05}
    )
    assert list(overhead.steps) == ["start-up", "set-up", "bootstrap", "shutdown", "assembly"]
    # the program's own two seconds are in no step
    assert overhead.before_seconds + overhead.after_seconds == pytest.approx(2.45 - 2.0)
    assert [c.what for c in overhead.cpu] == [
        "memgauge process",
        "line sampler thread",
        "line sampler thread",
    ]


def test_a_run_made_inside_a_longer_lived_process_has_no_start_up() -> None:
    state = RunState(100)  # a program that is not Python: no first or last line timed
    overhead = overhead_of(
        state, process_start=None, entered=5.0, spawned=5.01, reaped=6.0, assembled=6.02, cpu_before=0.0
    )
    assert set(overhead.steps) == {"set-up", "assembly"}


def test_the_record_round_trips_and_the_footer_says_it() -> None:
    profile = make_profile(rss=1 << 20, wall=1.0)
    profile.overhead = Overhead(
        {"start-up": 0.05, "set-up": 0.01, "bootstrap": 0.03, "shutdown": 0.02, "assembly": 0.04},
        [
            OwnCpu("memgauge process", 1, 0.08),
            OwnCpu("line sampler thread", 2, 0.01),
            OwnCpu("line sampler thread", 3, 0.005),
        ],
    )
    data = profile.to_dict()
    assert data["version"] == 8 and data["overhead"]["steps"]["bootstrap"] == 0.03
    assert Profile.from_dict(data) == profile
    summary = overhead_summary(profile)
    assert summary is not None
    assert summary.before_seconds == pytest.approx(0.09) and summary.after_seconds == pytest.approx(0.06)
    assert summary.cpu == [("memgauge process", 0.08), ("line sampler thread", pytest.approx(0.015))]
    text = TerminalRenderer(width=100).render(profile)
    # the last paragraph, its wrapped lines joined
    footer = " ".join(text[text.index("memgauge's own cost") :].split())
    assert footer.startswith("memgauge's own cost: 90 ms before the program's first line (start-up 50 ms")
    assert "60 ms after its last (shutdown 20 ms, assembly 40 ms)" in footer
    assert "CPU 95 ms (memgauge process 80 ms, line sampler thread 15 ms)" in footer
    # none recorded (in-process, or an older profile): no footer, and a v6 profile still reads
    old = make_profile(rss=1 << 20, wall=1.0)
    assert overhead_summary(old) is None and "own cost" not in TerminalRenderer().render(old)
    v6 = legacy_profile(old.to_dict(), 6)
    assert Profile.from_dict(v6).overhead is None
