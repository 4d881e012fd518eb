"""The training section of the HTML report: charts of the rate over the steps and of each step's
wait for data against the rest of it, the figures over the steady steps with their per-step
spread, and the sentence on what bounds the loop.

Registered in ``_html``'s ``SECTIONS``; a profile without training figures gets neither the section
nor the charts' data, so its page is unchanged. The rows come from ``analysis.training_figures``,
the same the terminal and Markdown reports show.
"""

from __future__ import annotations

from typing import Any

from memgauge.analysis import (
    data_movement_figures,
    phase_io,
    training_cpu_lines,
    training_cpu_sentence,
    training_figures,
)
from memgauge.model import Profile
from memgauge.render._format import esc
from memgauge.render._html_page import Part, table, text
from memgauge.render._html_tables import ProfileView
from memgauge.render._training_text import (
    PHASE_IO_HEADERS,
    PROCESS_HEADERS,
    figure_text,
    phase_io_cells,
    process_cells,
    spread_text,
)

# steps drawn: a longer run is shown one step in every few, so the page stays small
_MAX_POINTS = 500


def training_section(v: ProfileView) -> Part | None:
    t = v.profile.training
    if t is None:
        return None
    parts: list[str] = []
    if any(r.seconds for r in t.rows):
        parts.append('<div class="chart"><canvas id="chart-training-rate"></canvas></div>')
        parts.append('<div class="chart"><canvas id="chart-training-wait"></canvas></div>')
    if t.cpu is not None and t.cpu.t_seconds:
        parts.append('<div class="chart"><canvas id="chart-training-cpu-time"></canvas></div>')
    rows = [
        [text(f.name), text(figure_text(f)), text(spread_text(f)), text(f.note)]
        for f in training_figures(t) + data_movement_figures(t)
    ]
    parts.append(
        table([("figure", False), ("steady", True), ("per step p10-p90", True), ("note", False)], rows)
    )
    if t.verdict:
        parts.append(f'<p class="{"bad" if t.bound == "data" else ""}">{esc(t.verdict)}</p>')
    if training_cpu_sentence(t):
        parts.append(f"<p>{esc(training_cpu_sentence(t))}</p>")
    if t.processes:
        parts.append("<h3>processes of the loop</h3>")
        if any(p.cpu_share is not None for p in t.processes):
            parts.append('<div class="chart"><canvas id="chart-training-cpu"></canvas></div>')
        headers = [(h, i > 0) for i, h in enumerate(PROCESS_HEADERS)]
        parts.append(table(headers, [[text(cell) for cell in process_cells(p)] for p in t.processes]))
    return Part(
        "".join(parts),
        f"training throughput: bound by {t.bound}",
        "Rates over the steady steps (warm-up and the FLOP-counted step left out), per second of "
        "those steps' own wall time. A step runs from the previous step's end to its optimizer "
        "step (or memgauge.step()); its data wait is the time spent fetching batches in it.",
    )


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


def phase_io_section(v: ProfileView) -> Part | None:
    """The phases that read or wrote anything: bytes and rates; None where none did."""
    rows = [[text(cell) for cell in phase_io_cells(p)] for p in phase_io(v.profile)]
    if not rows:
        return None
    headers = [(h, i > 0) for i, h in enumerate(PHASE_IO_HEADERS)]
    return Part(
        table(headers, rows),
        "I/O by phase",
        "The kernel's I/O counters of the phase's process (/proc/self/io) at its start and end: "
        "read and written through calls (pipes, sockets and the page cache included), with their "
        "rates over the phase's time, and what reached storage.",
    )
