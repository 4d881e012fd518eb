"""GPU time per line (docs/gpu.md): the line sampler's series of the main thread's line over time
(``capture/_line_times``: buckets, thinning, the wire format both ways) and its join with NVML's
utilisation (``analysis.gpu_time_per_line``), on series written by hand with exact answers (times
in binary fractions, so every sum is exact)."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from memgauge.capture._line_times import LineTimes, line_spans
from memgauge.capture._lines_write import lines_record
from memgauge.capture._sampler import Sampler
from memgauge.model import LineStats, Profile
from memgauge.render import HtmlRenderer, MarkdownRenderer, TerminalRenderer
from memgauge.sections.gpu import GpuDevice, GpuProcess, GpuUtilization, LineSpan, gpu_time_per_line
from memgauge.sections.gpu._assemble import add_gpu_time
from tests.factories import make_profile

A = ("prog.py", 3, "<module>")
B = ("prog.py", 7, "spin")


def device(
    t: list[float], gpu: list[int | None], interval: float = 0.25, pids: tuple[int, ...] = ()
) -> GpuDevice:
    return GpuDevice(
        index=0,
        utilization=GpuUtilization(interval, t, gpu, [None] * len(t)),
        processes=[GpuProcess(p, 1 << 30, "pid", p) for p in pids],
    )


def span(pid: int, key: tuple[str, int, str], start: float, end: float, seconds: float) -> LineSpan:
    return (pid, *key, start, end, seconds)


def test_each_line_gets_the_utilisation_of_the_time_it_ran() -> None:
    # samples at 0.25 .. 1.0 s: each holds since the one before (the first for one interval)
    gpu = device([0.25, 0.5, 0.75, 1.0], [0, 80, 80, 0])
    joined = gpu_time_per_line(
        [
            span(1, A, 0.0, 0.5, 0.5),  # 0.25 s at 0 %, 0.25 s at 80 %
            span(1, B, 0.5, 1.0, 0.25),  # half the bucket: 0.125 s at 80 %, 0.125 s at 0 %
            span(1, B, 1.0, 1.5, 0.5),  # after NVML's last sample: not covered
        ],
        [gpu],
    )
    assert joined[(1, *A)].gpu_seconds == 0.2 and joined[(1, *A)].gpu_busy == 40.0
    assert joined[(1, *B)].gpu_seconds == 0.1 and joined[(1, *B)].gpu_busy == 40.0
    assert joined[(1, *B)].covered_seconds == 0.25


def test_devices_add_up_and_unknown_utilisation_counts_in_neither_figure() -> None:
    busy = device([0.5, 1.0], [50, 100], interval=0.5)
    blind = device([0.5, 1.0], [None, 100], interval=0.5)
    (line,) = gpu_time_per_line([span(1, A, 0.0, 1.0, 1.0)], [busy, blind]).values()
    # device-seconds: 0.25 + 0.5 on the first, 0.5 on the second (its first half unreported)
    assert line.gpu_seconds == 1.25 and line.covered_seconds == 1.5
    assert line.gpu_busy == round(100 * 1.25 / 1.5, 1)


def test_a_process_is_joined_with_the_devices_nvml_saw_it_on() -> None:
    gpu = device([0.5, 1.0], [100, 100], interval=0.5, pids=(1,))
    joined = gpu_time_per_line([span(1, A, 0.0, 1.0, 1.0), span(2, A, 0.0, 1.0, 1.0)], [gpu])
    assert (1, *A) in joined and (2, *A) not in joined  # a DataLoader worker: no GPU time
    # NVML listed no process of the run anywhere: every process with every device
    joined = gpu_time_per_line([span(2, A, 0.0, 1.0, 1.0)], [device([0.5, 1.0], [100, 100], 0.5)])
    assert joined[(2, *A)].gpu_seconds == 1.0


def test_no_series_no_figures_and_the_profile_json_omits_them() -> None:
    assert gpu_time_per_line([span(1, A, 0.0, 1.0, 1.0)], [GpuDevice(index=0)]) == {}
    lines = [
        LineStats(pid=1, file=A[0], line=A[1], function=A[2]),
        LineStats(pid=1, file=B[0], line=B[1], function=B[2]),
    ]
    add_gpu_time(lines, [span(1, A, 0.0, 0.5, 0.5)], [device([0.25, 0.5], [0, 80])])
    assert (lines[0].gpu_seconds, lines[0].gpu_busy, lines[1].gpu_seconds) == (0.2, 40.0, None)
    data = make_profile(lines=lines).to_dict()
    assert data["lines"][0]["gpu_busy"] == 40.0 and "gpu_seconds" not in data["lines"][1]
    assert Profile.from_dict(data).lines == lines


def test_the_series_splits_a_sample_at_bucket_edges_and_thins_by_pairs() -> None:
    times = LineTimes(width=0.25, max_buckets=4)
    times.charge(10.0, 10.375, A)  # 0.25 in bucket 0, 0.125 in bucket 1
    times.charge(10.375, 10.5, B)
    assert times.buckets == [{A: 0.25}, {A: 0.125, B: 0.125}]
    times.charge(10.5, 11.25, B)  # reaches bucket 4: pairs merged, 0.5 s buckets
    assert times.width == 0.5
    assert times.buckets == [{A: 0.375, B: 0.125}, {B: 0.5}, {B: 0.25}]
    keys: dict[tuple[str, int, str], int] = {}
    record = times.record(lambda k: keys.setdefault(k, len(keys)))
    spans = line_spans(record, list(keys), 7, t0=9.0)
    assert spans == [
        (7, *A, 1.0, 1.5, 0.375),
        (7, *B, 1.0, 1.5, 0.125),
        (7, *B, 1.5, 2.0, 0.5),
        (7, *B, 2.0, 2.5, 0.25),
    ]
    assert sum(s[-1] for s in spans) == 1.25  # nothing lost in the thinning
    with pytest.raises(ValueError):
        line_spans({"origin": 0.0, "width": 0.5, "rows": [[0, 0]]}, list(keys), 7, 0.0)


def test_the_sampler_records_the_main_threads_line_and_writes_it(tmp_path: Path) -> None:
    assert threading.current_thread() is threading.main_thread()
    clock = iter([100.0, 100.25, 100.5]).__next__
    sampler = Sampler(str(tmp_path), clock=clock)
    try:
        sampler.sample()
        sampler.sample()
    finally:
        sampler.close()
    record = lines_record(sampler)
    keys = [tuple(k) for k in record["keys"]]  # type: ignore[misc]
    spans = line_spans(record["line_times"], keys, sampler.pid, 100.0)
    assert {s[1] for s in spans} == {__file__}
    assert sum(s[-1] for s in spans) == pytest.approx(0.5) and spans[0][4] == 0.0


def test_a_sample_costs_microseconds() -> None:
    times = LineTimes()
    stacks = [(1, [A], None), (2, [B], None)]
    n = 20_000
    start = time.perf_counter()
    for i in range(n):
        times.add(i * 0.01, 0.01, stacks, 1)
    per_sample = (time.perf_counter() - start) / n
    assert per_sample < 50e-6  # ~1-2 us measured here; a 10 ms sampling interval: < 0.5 %
    assert len(times.buckets) <= 2000


def test_the_reports_show_the_gpu_columns_only_where_lines_have_them() -> None:
    spin = LineStats(pid=1, file="/p/prog.py", line=7, function="spin", cpu_python_seconds=0.8, samples=80)
    spin.gpu_seconds, spin.gpu_busy = 0.72, 90.0
    idle = LineStats(
        pid=1, file="/p/prog.py", line=3, function="<module>", cpu_python_seconds=0.2, samples=20
    )
    with_gpu = make_profile(lines=[spin, idle])
    without = make_profile(lines=[replace(spin, gpu_seconds=None, gpu_busy=None), idle])
    md = MarkdownRenderer().render(with_gpu)
    assert "| gpu | gpu busy |" in md and "| 720 ms | 90% |" in md and "| - | - |" in md
    assert "gpu busy" in TerminalRenderer(width=160).render(with_gpu)
    assert "GPU busy" in HtmlRenderer().render(with_gpu)
    for render in (MarkdownRenderer().render, TerminalRenderer(width=160).render):
        assert "gpu busy" not in render(without)
    assert "GPU busy" not in HtmlRenderer().render(without)
