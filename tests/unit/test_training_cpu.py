"""CPU utilisation over time: the watcher's sampler over a ``/proc/stat`` file the test writes
(per-core shares, per-process cores, thinning), the real ``/proc/stat`` read, and the steady-state
figures the analysis takes from the series (main loop, DataLoader workers, saturation)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgauge.cli._tensorboard import scalars
from memgauge.model import CpuProcessSeries, CpuUsage, Profile
from memgauge.sections.training import (
    TrainingProcess,
    TrainingStep,
    summarize_training,
    training_cpu_lines,
    training_cpu_sentence,
    with_cpu,
)
from memgauge.watcher._cpu import CpuSampler, read_core_times
from tests.factories import make_profile


def write_stat(path: Path, cores: list[tuple[int, int]]) -> None:
    """``cores``: (busy, idle) ticks of each CPU."""
    lines = ["cpu  0 0 0 0 0 0 0 0 0 0"]
    lines += [f"cpu{i} {busy} 0 0 {idle} 0 0 0 0 0 0" for i, (busy, idle) in enumerate(cores)]
    path.write_text("\n".join([*lines, "intr 1 2 3", ""]))


def test_the_real_proc_stat_has_one_entry_per_cpu() -> None:
    cores = read_core_times()
    assert cores and all(0 <= busy <= total for busy, total in cores)
    assert read_core_times("/nonexistent/stat") == []


def test_sampler_gives_each_core_s_busy_share_and_each_process_s_cores(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    write_stat(stat, [(0, 0), (0, 0)])
    sampler = CpuSampler(interval=0.2, stat_path=str(stat))
    sampler.sample(0.0, {10: 0.0})
    write_stat(stat, [(15, 5), (0, 20)])  # core 0: 75% busy, core 1 idle
    sampler.sample(0.1, {10: 0.1})  # under the interval: ignored
    sampler.sample(0.25, {10: 0.25, 11: 0.05})  # 11 was born in the interval
    write_stat(stat, [(35, 5), (10, 30)])
    sampler.sample(0.5, {11: 0.30})  # 10 has gone
    usage = sampler.build()
    assert usage.t_seconds == [0.25, 0.5]
    assert usage.cores == [[0.75, 1.0], [0.0, 0.5]]
    series = {s.pid: s for s in usage.processes}
    assert series[10].start_index == 0 and series[10].cores == [pytest.approx(1.0)]
    assert series[11].start_index == 0 and series[11].cores == [pytest.approx(0.2), pytest.approx(1.0)]


def test_the_run_s_end_closes_a_last_short_interval_so_no_cpu_is_lost(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    write_stat(stat, [(0, 0)])
    sampler = CpuSampler(interval=0.2, stat_path=str(stat))
    sampler.sample(0.35, {1: 0.3}, final=True)  # nothing kept yet: no interval to end
    sampler.sample(0.0, {1: 0.0, 2: 0.0})
    write_stat(stat, [(20, 5)])
    sampler.sample(0.25, {1: 0.2, 2: 0.05})
    write_stat(stat, [(28, 7)])
    sampler.sample(0.3, {1: 0.25, 2: 0.05})  # under the interval: not kept...
    # ...but the end is, with the CPU of process 2, which ended after the last kept interval
    sampler.sample(0.35, {1: 0.3, 2: 0.1}, final=True)
    sampler.sample(0.35, {1: 0.3, 2: 0.1}, final=True)  # no time since: nothing more
    usage = sampler.build()
    assert usage.t_seconds == [0.25, 0.35]
    assert usage.cores == [[0.8, 0.8]]
    spans = [0.25, 0.1]
    used = {s.pid: sum(v * d for v, d in zip(s.cores, spans, strict=True)) for s in usage.processes}
    assert used == {1: pytest.approx(0.3), 2: pytest.approx(0.1)}


def test_a_long_run_is_thinned_by_pairs_and_the_interval_doubles(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    sampler = CpuSampler(interval=0.25, capacity=4, stat_path=str(stat))
    busy = 0
    for i in range(5):
        write_stat(stat, [(busy, i * 10 - busy)])
        sampler.sample(i * 0.25, {1: i * 0.125})
        busy += 10 if i % 2 else 0  # intervals alternate idle and busy
    usage = sampler.build()
    assert sampler.interval == pytest.approx(0.5)
    assert usage.t_seconds == [0.5, 1.0]
    assert usage.cores == [[0.5, 0.5]]  # the pairs' mean
    assert usage.processes[0].cores == [pytest.approx(0.5), pytest.approx(0.5)]


def steps(n: int, seconds: float = 0.5) -> list[TrainingStep]:
    return [TrainingStep(i, (i + 1) * seconds, seconds, kind="optimizer") for i in range(n)]


def usage(main: float, worker: float, cores: list[float]) -> CpuUsage:
    t = [0.25 * (i + 1) for i in range(20)]  # 0..5 s
    return CpuUsage(
        interval_seconds=0.25,
        t_seconds=t,
        cores=[[c] * len(t) for c in cores],
        processes=[
            CpuProcessSeries(pid=1, start_index=0, cores=[main] * len(t)),
            # the workers start one second in: before it they count as idle
            CpuProcessSeries(pid=2, start_index=4, cores=[worker] * 16),
            CpuProcessSeries(pid=3, start_index=4, cores=[worker] * 16),
        ],
    )


def trained(cpu: CpuUsage) -> Profile:
    t = summarize_training(steps(10), pid=1)
    t.processes = [
        TrainingProcess(pid=1, role="main loop", command="python", cpu_seconds=1.0),
        TrainingProcess(pid=2, role="DataLoader worker 0", command="python", cpu_seconds=1.0),
        TrainingProcess(pid=3, role="DataLoader worker 1", command="python", cpu_seconds=1.0),
    ]
    profile = make_profile()
    profile.training = with_cpu(t, cpu)
    return profile


def test_steady_cpu_is_over_the_steady_steps_only() -> None:
    t = trained(usage(main=0.9, worker=0.4, cores=[0.95, 0.9])).training
    assert t is not None and t.warmup_steps == 1  # steady steps: 0.5 s .. 5 s
    assert t.cpu_main_loop == pytest.approx(0.9)
    # each worker 0.4 cores from 1 s on: over 0.5..5 s, (4 / 4.5) x 0.4 each
    assert t.cpu_workers == pytest.approx(2 * 0.4 * 4 / 4.5, abs=1e-3)
    assert t.cpu_busy_share == pytest.approx(0.925) and t.cpu_saturated is True
    sentence = training_cpu_sentence(t)
    assert "main loop 0.90 cores" in sentence and "2 cores 92% busy (saturated)" in sentence
    labels = [line.label for line in training_cpu_lines(t)]
    assert labels[0] == "main loop (1)" and set(labels[1:]) == {
        "DataLoader worker 0 (2)",
        "DataLoader worker 1 (3)",
    }
    idle = trained(usage(main=0.3, worker=0.1, cores=[0.3, 0.2])).training
    assert idle is not None and idle.cpu_saturated is False


def test_without_a_series_or_steady_steps_there_is_no_steady_cpu() -> None:
    t = summarize_training(steps(10), pid=1)
    assert with_cpu(t, None).cpu_main_loop is None and training_cpu_sentence(t) == ""
    early = CpuUsage(interval_seconds=0.1, t_seconds=[0.1], cores=[[1.0]], processes=[])
    unseen = [TrainingStep(0, 0.5, None, kind="explicit")]  # its start unseen: no steady step
    one = with_cpu(summarize_training(unseen, pid=1), early)
    assert one.cpu is early and one.cpu_main_loop is None  # the series kept, no steady figure


def test_the_cpu_series_round_trips_and_every_report_shows_it() -> None:
    from memgauge.render import HtmlRenderer, MarkdownRenderer, TerminalRenderer

    profile = trained(usage(main=0.9, worker=0.4, cores=[0.95, 0.9]))
    assert Profile.from_dict(profile.to_dict()).to_dict() == profile.to_dict()
    assert "CPU in the steady steps: main loop 0.90 cores" in TerminalRenderer(width=160).render(profile)
    assert "DataLoader workers 0.71 cores" in MarkdownRenderer().render(profile)
    html = HtmlRenderer().render(profile)
    assert 'id="chart-training-cpu-time"' in html and '"cpu_time"' in html
    tags = {tag: value for tag, _, value in scalars(profile)}
    assert tags["memgauge/steady/cpu_main_loop"] == pytest.approx(0.9)
    assert "memgauge/steady/gpu_utilization" not in tags  # no NVML here
    # compare: the steady CPU of two runs side by side
    from memgauge.analysis import compare
    from memgauge.render import TerminalComparisonRenderer

    c = compare([profile, trained(usage(main=0.3, worker=0.1, cores=[0.3, 0.2]))], ["a", "b"])
    assert c.section("training") is not None
    rows = {r.label: r.values for r in c.section("training").rows}
    assert rows["main loop CPU"] == (pytest.approx(0.9), pytest.approx(0.3))
    assert "0.90 cores" in TerminalComparisonRenderer(width=160).render(c)
