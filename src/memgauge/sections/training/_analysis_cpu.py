"""A loop's CPU in its steady state: the main loop's process, its DataLoader workers, the machine.

Pure functions over the watcher's CPU series (``CpuUsage``) and the loop's steps. The steady span
runs from the first steady step's start to the last one's end; each sampled interval weighs what it
overlaps that span. A figure in cores is CPU seconds per second (1.0: one core busy); the cores'
busy share is machine-wide (other programs count), so saturation says there was no idle CPU for
more workers or threads, whoever used it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from memgauge.model import CpuUsage
from memgauge.sections.training._record import Training

# the machine's cores at least this busy on average over the steady steps: the CPU is saturated
CPU_SATURATED = 0.9
WORKER_ROLE = "DataLoader worker"


@dataclass(frozen=True)
class TrainingCpuLine:
    """One process's CPU over time for the charts: its label (its role, else its pid) and its
    cores busy at each of the series' times."""

    label: str
    cores: tuple[float, ...]


def _weights(cpu: CpuUsage, start: float, end: float) -> list[float]:
    """How much of each sampled interval lies inside ``start``..``end`` (seconds)."""
    out = []
    for i, t in enumerate(cpu.t_seconds):
        begin = cpu.t_seconds[i - 1] if i else t - cpu.interval_seconds
        out.append(max(0.0, min(t, end) - max(begin, start)))
    return out


def _mean(values: Sequence[float], offset: int, weights: Sequence[float]) -> float:
    total = sum(weights)
    used = sum(v * weights[offset + i] for i, v in enumerate(values) if offset + i < len(weights))
    return used / total if total > 0 else 0.0


def steady_span(t: Training) -> tuple[float, float] | None:
    """From the first steady step's start to the last one's end; None with no steady step."""
    steady = [r for r in t.rows if not r.warmup and not r.flops_counted and r.seconds is not None]
    if not steady:
        return None
    return min(r.end_seconds - (r.seconds or 0.0) for r in steady), max(r.end_seconds for r in steady)


def with_cpu(t: Training, cpu: CpuUsage | None) -> Training:
    """``t`` with the CPU series and its steady figures; its ``processes`` name the roles."""
    if cpu is None or not cpu.t_seconds:
        return t
    out = replace(t, cpu=cpu)
    span = steady_span(t)
    weights = _weights(cpu, *span) if span is not None else []
    if sum(weights) <= 0:
        return out
    roles = {p.pid: p.role for p in t.processes}
    by_pid = {s.pid: _mean(s.cores, s.start_index, weights) for s in cpu.processes}
    main = by_pid.get(t.pid)  # None: the loop's process was never sampled
    out.cpu_main_loop = None if main is None else round(main, 4)
    workers = [v for pid, v in by_pid.items() if roles.get(pid, "").startswith(WORKER_ROLE)]
    out.cpu_workers = round(sum(workers), 4) if workers else None
    if cpu.cores:
        out.cpu_busy_share = round(sum(_mean(c, 0, weights) for c in cpu.cores) / len(cpu.cores), 4)
        out.cpu_saturated = out.cpu_busy_share >= CPU_SATURATED
    return out


def training_cpu_sentence(t: Training) -> str:
    """The reports' line on the steady CPU; "" where it was not sampled."""
    if t.cpu_main_loop is None and t.cpu_busy_share is None:
        return ""
    parts = [] if t.cpu_main_loop is None else [f"main loop {t.cpu_main_loop:.2f} cores"]
    if t.cpu_workers is not None:
        parts.append(f"DataLoader workers {t.cpu_workers:.2f} cores")
    if t.cpu_busy_share is not None and t.cpu is not None:
        state = "saturated" if t.cpu_saturated else "not saturated"
        parts.append(f"the machine's {len(t.cpu.cores)} cores {t.cpu_busy_share:.0%} busy ({state})")
    return "CPU in the steady steps: " + ", ".join(parts) + "."


def training_cpu_lines(t: Training) -> tuple[TrainingCpuLine, ...]:
    """The processes' CPU series for the charts, each over every time of the series, busiest
    first: the main loop, its workers and the others, named by role."""
    if t.cpu is None:
        return ()
    n = len(t.cpu.t_seconds)
    roles = {p.pid: p.role for p in t.processes}
    lines = []
    for s in t.cpu.processes:
        values = [0.0] * n
        for i, v in enumerate(s.cores):
            if s.start_index + i < n:
                values[s.start_index + i] = v
        role = "main loop" if s.pid == t.pid else roles.get(s.pid, "")
        lines.append(TrainingCpuLine(f"{role} ({s.pid})" if role else f"pid {s.pid}", tuple(values)))
    return tuple(sorted(lines, key=lambda line: -sum(line.cores)))
