"""``memgauge plan``'s analysis on members built by construction: the worst case, the exact
combined peak at offsets, the distribution under random offsets against what can be counted by
hand, the Wilson interval, max copies, and the plan record's versions."""

from __future__ import annotations

import json
import math
import random
import time
from pathlib import Path

import pytest

from memgauge._errors import ProfileFormatError, UsageError
from memgauge.analysis import (
    PlanInput,
    admit,
    aligned_offsets,
    build_plan,
    combined_peak,
    copies_of,
    kernel_bytes_per_group,
    max_copies,
    plan_input,
    simulate,
    wilson_interval,
    worst_case,
)
from memgauge.model import PlanMember, PlanRecord, PlanRun, Timeline, load_plan
from memgauge.render import HtmlPlanRenderer, JsonPlanRenderer, MarkdownPlanRenderer, TerminalPlanRenderer
from tests.factories import make_profile

MIB = 1 << 20


def spike(
    name: str,
    at: float,
    *,
    base: int = 30,
    high: int = 100,
    width: float = 0.5,
    duration: float = 4.5,
    period: float | None = None,
) -> PlanInput:
    """Base MiB for ``duration`` s, base + high MiB from ``at`` for ``width`` s."""
    member = PlanMember(name, name, ["python", f"{name}.py"], (base + high) * MIB, 0, at, duration, period)
    return PlanInput(member, (0.0, at, at + width), (base * MIB, (base + high) * MIB, base * MIB))


def test_worst_case_is_every_need_plus_the_kernels_share_per_group() -> None:
    kernel = kernel_bytes_per_group(4)
    assert kernel == 64 * 4096 * 4  # one charge batch per CPU
    profile = make_profile(rss=120 * MIB)
    profile.peak.needs_bytes = 130 * MIB
    one = plan_input(profile, name="a", source="a.json", command=["python", "a.py"], cores=4)
    assert one.member.need_bytes == 130 * MIB and one.member.kernel_bytes == kernel
    assert worst_case(copies_of(one, 3)) == 3 * (130 * MIB + kernel)


def test_a_timeline_is_moved_to_peak_at_the_need() -> None:
    timeline = Timeline(
        interval_seconds=1.0, t_seconds=[0.2, 1.0, 2.0], tree_resident_bytes=[10 * MIB, 50 * MIB, 20 * MIB]
    )
    profile = make_profile(wall=3.0, rss=50 * MIB, timeline=timeline)
    profile.peak.needs_bytes = 60 * MIB
    one = plan_input(profile, name="a", source="a.json", command=["python", "a.py"], cores=1)
    k = one.member.kernel_bytes
    assert one.t_seconds == (0.0, 1.0, 2.0)  # from the start
    assert one.bytes_at == (20 * MIB + k, 60 * MIB + k, 30 * MIB + k)
    assert one.member.peak_at_seconds == 1.0 and one.member.duration_seconds == 3.0


def test_combined_peak_is_exact_at_offsets() -> None:
    members = [spike("a", 0.5), spike("b", 2.0), spike("c", 3.5)]
    assert combined_peak(members, [0.0, 0.0, 0.0]) == (3 * 30 + 100) * MIB
    assert aligned_offsets(members) == [3.0, 1.5, 0.0]
    assert combined_peak(members, aligned_offsets(members)) == worst_case(members) == 390 * MIB
    # one ends exactly as the next starts: they do not overlap
    assert combined_peak([spike("a", 0.0), spike("b", 0.0)], [0.0, 4.5]) == 130 * MIB


def test_a_repeating_member_comes_back_every_period() -> None:
    job = spike("job", 0.0, base=0, high=100, width=1.0, duration=1.0, period=10.0)
    other = spike("other", 25.0, base=0, high=50, width=1.0, duration=30.0)
    # the job runs at 20, 30, ...: at 25 it is between runs, at 20.5 the other is not yet up
    assert combined_peak([job, other], [0.0, 0.0]) == 100 * MIB
    assert combined_peak([job, other], [5.5, 0.0]) == 150 * MIB  # runs at 25.5: overlaps


def test_the_distribution_matches_the_chance_counted_by_hand() -> None:
    # two programs of 10 s, each 100 MiB for 1 s at its start, else nothing; starts uniform in
    # [0, 10]: their spikes meet when |o1 - o2| < 1, with chance 1 - (9/10)^2 = 0.19
    a = spike("a", 0.0, base=0, high=100, width=1.0, duration=10.0)
    b = spike("b", 0.0, base=0, high=100, width=1.0, duration=10.0)
    d = simulate([a, b], 150 * MIB, trials=20_000, seed=3, bins=2000)
    assert d.exceed_low <= d.exceed_probability <= d.exceed_high
    # the grid counts spikes within one bin of each other as meeting: a little over 0.19
    assert 0.17 < d.exceed_probability < 0.22
    assert d.p50_bytes == 100 * MIB and d.max_bytes == 200 * MIB
    assert d.p999_bytes == 200 * MIB


def test_the_grid_stays_between_the_largest_member_and_the_worst_case() -> None:
    rng = random.Random(7)
    members = [
        spike(f"m{i}", rng.uniform(0, 4), base=rng.randint(5, 30), high=rng.randint(10, 90)) for i in range(8)
    ]
    d = simulate(members, 10 << 30, trials=3000, seed=1, bins=64)
    # the grid may count near peaks as meeting, never more than all at once; and never less than
    # the largest member alone
    assert d.max_bytes <= worst_case(members)
    assert d.p50_bytes >= max(m.peak_bytes for m in members)


def test_wilson_interval() -> None:
    low, high = wilson_interval(0, 10_000)
    assert low == 0.0 and 0.0003 < high < 0.0004  # about 3.84 / n at zero hits
    low, high = wilson_interval(50, 100)
    assert math.isclose(low, 0.4038, abs_tol=1e-3) and math.isclose(high, 0.5962, abs_tol=1e-3)


def test_max_copies_by_worst_and_by_percentile() -> None:
    hold = spike("hold", 0.0, base=150, high=0, width=4.5)
    found = max_copies(hold, machine_bytes=512 * MIB)
    assert (found.copies, found.figure_bytes, found.next_figure_bytes) == (3, 450 * MIB, 600 * MIB)
    # a short spike: many more copies fit when their spikes seldom meet
    short = spike("short", 0.0, base=10, high=200, width=0.1, duration=10.0)
    by_worst = max_copies(short, machine_bytes=1024 * MIB).copies
    by_p99 = max_copies(short, machine_bytes=1024 * MIB, rule="p99", trials=2000).copies
    assert by_worst == 4 and by_p99 > by_worst


def test_a_plan_of_100_members_of_1000_samples_over_10000_trials_is_quick() -> None:
    rng = random.Random(5)
    members = []
    for i in range(100):
        t = tuple(k * 0.01 for k in range(1000))
        values = tuple(rng.randint(40, 60) * MIB for _ in range(1000))
        members.append(PlanInput(PlanMember(f"m{i}", "m", ["m"], max(values), 0, 1.0, 10.0), t, values))
    # the CPU time the plan costs, the best of three: on a shared machine, wall time says more
    # about the neighbours (0.4 s of CPU took 1.3-1.9 s of wall time at a load of 19 on 2 cores)
    best = math.inf
    for _ in range(3):
        start = time.process_time()
        record = build_plan(members, machine_bytes=8 << 30, machine_cores=4, rule="p99.9")
        best = min(best, time.process_time() - start)
    assert record.distribution is not None and record.distribution.trials == 10_000
    assert best < 2.0


def test_the_record_round_trips_and_refuses_a_newer_version(tmp_path: Path) -> None:
    members = [spike("a", 0.5), spike("b", 2.0)]
    record = build_plan(members, machine_bytes=300 * MIB, machine_cores=2, trials=500)
    run = PlanRun("given", 2, [0.0, 0.0], 300 * MIB, True, 0, 0, 200 * MIB, 4.6, 1.02, [0, 0], 230 * MIB)
    record.runs.append(run)
    text = JsonPlanRenderer().render(record)
    path = tmp_path / "plan.json"
    path.write_text(text)
    assert load_plan(path) == record
    data = json.loads(text)
    data["version"] = 3
    with pytest.raises(ProfileFormatError, match="newer than this memgauge reads"):
        PlanRecord.from_dict(data)
    with pytest.raises(ProfileFormatError, match="a memgauge-fit record, not a memgauge plan"):
        PlanRecord.from_dict({"format": "memgauge-fit", "version": 1})


def test_every_format_says_the_same() -> None:
    members = [spike("a", 0.5), spike("b", 2.0), spike("c", 3.5)]
    record = build_plan(members, machine_bytes=300 * MIB, machine_cores=2, trials=500)
    for text in (
        TerminalPlanRenderer().render(record),
        MarkdownPlanRenderer().render(record),
        HtmlPlanRenderer().render(record),
    ):
        assert "do NOT fit" in text and "390 MiB" in text and "190 MiB" in text


def test_admission_judges_a_newcomer_against_what_the_machine_holds() -> None:
    held = [spike("a", 0.5), spike("b", 2.0)]  # 130 MiB each at worst, 30 MiB between spikes
    newcomer = spike("c", 3.5)
    worst = admit(held, newcomer, machine_bytes=300 * MIB)
    assert not worst.admitted and (worst.before_bytes, worst.after_bytes) == (260 * MIB, 390 * MIB)
    assert worst.free_bytes == -90 * MIB
    # by a percentile, short spikes seldom meet: in 10 s runs, spikes of 0.1 s meet two at a
    # time in ~6% of the draws (90 + 200 MiB) and three at a time in ~0.1%
    brief = [spike(n, 1.0, width=0.1, duration=10.0) for n in ("a", "b", "c")]
    p99 = admit(brief[:2], brief[2], machine_bytes=300 * MIB, rule="p99", trials=4000)
    assert p99.admitted and p99.after_bytes == 290 * MIB
    # releasing one is judging without it
    assert admit(held[:1], newcomer, machine_bytes=300 * MIB).admitted
    with pytest.raises(UsageError, match="admission rule"):
        admit(held, newcomer, machine_bytes=300 * MIB, rule="p50")
