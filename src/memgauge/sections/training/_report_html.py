"""The training charts' data on the HTML page: per step its rate, its wait for data and the rest of
its time, and the CPU of each process over time; nothing without timed steps, so a page without
them has no chart areas. The section itself is built with the other formats' (``_report``).
"""

from __future__ import annotations

from typing import Any

from memgauge.model import Profile
from memgauge.sections.training._analysis_cpu import training_cpu_lines

# steps drawn: a longer run is shown one step in every few, so the page stays small
_MAX_POINTS = 500


def training_data(p: Profile) -> dict[str, Any] | None:
    """The charts' data: per step (every few steps of a long run), its rate, its wait for data and
    the rest of its time, and whether it is warm-up; None without timed steps."""
    t = p.training
    if t is None:
        return None
    timed = [r for r in t.rows if r.seconds]
    if not timed:
        return None
    every = -(-len(timed) // _MAX_POINTS)
    shown = timed[::every]
    busy = [q for q in t.processes if q.cpu_share is not None]
    return {
        "labels": [str(r.index) for r in shown],
        "rate": [round(1 / (r.seconds or 1), 6) for r in shown],
        "wait": [round(r.wait_seconds, 6) for r in shown],
        "compute": [round(max(0.0, (r.seconds or 0.0) - r.wait_seconds), 6) for r in shown],
        "warmup": [r.warmup or r.flops_counted for r in shown],
        # CPU per process: its CPU seconds over its lifetime (1 = one core busy throughout)
        "cpu": {
            "labels": [f"{q.role or q.command[:30]} ({q.pid})" for q in busy],
            "share": [q.cpu_share for q in busy],
        },
        "cpu_time": cpu_time_data(p),
    }


def cpu_time_data(p: Profile) -> dict[str, Any] | None:
    """CPU over time: each process's cores busy (named by role) and the machine's cores busy."""
    t = p.training
    if t is None or t.cpu is None or not t.cpu.t_seconds:
        return None
    cores = t.cpu.cores
    machine = [round(sum(c[i] for c in cores), 4) for i in range(len(t.cpu.t_seconds))] if cores else []
    return {
        "t": t.cpu.t_seconds,
        "machine": machine,
        "cores": len(cores),
        "lines": [{"label": line.label, "cores": list(line.cores)} for line in training_cpu_lines(t)[:8]],
    }
