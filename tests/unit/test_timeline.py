from __future__ import annotations

import json

from memgauge.model._profile import Timeline
from memgauge.watcher._timeline import TimelineBuilder


def _check_aligned(tl: Timeline) -> None:
    n = len(tl.t_seconds)
    assert len(tl.tree_resident_bytes) == len(tl.cpu_user_seconds) == len(tl.cpu_system_seconds) == n
    for s in tl.processes:
        assert s.start_index >= 0 and s.start_index + len(s.resident_bytes) <= n


def test_thinning_keeps_spikes_and_doubles_interval() -> None:
    b = TimelineBuilder(interval=0.01, capacity=8)
    values = [1, 2, 3, 99, 5, 6, 7]  # one spike at sample 3
    for i, v in enumerate(values):
        b.add(i * 0.01, v, float(i), 0.0, {10: v})
    assert len(b) == 7 and b.interval == 0.01
    b.add(0.07, 8, 7.0, 0.0, {10: 8})  # reaches capacity: pairs merge
    tl = b.build()
    assert b.interval == 0.02
    assert tl.t_seconds == [0.0, 0.02, 0.04, 0.06]
    assert tl.tree_resident_bytes == [2, 99, 6, 8]  # max of each pair: the spike survives
    assert tl.cpu_user_seconds == [1.0, 3.0, 5.0, 7.0]  # cumulative: the later value
    assert tl.processes[0].resident_bytes == [2, 99, 6, 8]
    _check_aligned(tl)


def test_processes_that_start_and_end_mid_run_stay_aligned() -> None:
    b = TimelineBuilder(interval=0.01, capacity=8)
    for i in range(30):
        procs = {1: 100 + i}
        if 3 <= i < 11:
            procs[2] = 1000 + i
        if i >= 17:
            procs[3] = 5000 + i
        b.add(i * 0.01, sum(procs.values()), 0.0, 0.0, procs)
    tl = b.build()
    _check_aligned(tl)
    by_pid = {s.pid: s for s in tl.processes}
    assert set(by_pid) == {1, 2, 3}
    assert max(by_pid[2].resident_bytes) == 1010  # its maximum survives every merge
    assert by_pid[1].start_index == 0 and by_pid[1].start_index + len(by_pid[1].resident_bytes) == len(
        tl.t_seconds
    )


def test_one_hour_at_100hz_stays_a_few_hundred_kb() -> None:
    b = TimelineBuilder(interval=0.01)
    t = 0.0
    while t < 3600:
        b.add(t, 123_456_789, t * 0.9, t * 0.1, {1: 100_000_000, 2: 23_456_789}, cgroup_bytes=130_000_000)
        t += b.interval
    tl = b.build()
    size = len(json.dumps(tl.__dict__, default=lambda o: o.__dict__))
    assert 1024 <= len(tl.t_seconds) <= 2048
    assert size < 1_000_000, size
    _check_aligned(tl)
