"""The training section of the terminal report: rates, data wait, FLOPs and MFU over the steady
steps, with the per-step spread, and the one sentence on what bounds the loop. Nothing for a
profile without training figures. The rows come from ``analysis.training_figures``."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from memgauge.analysis import data_movement_figures, phase_io, training_cpu_sentence, training_figures
from memgauge.model import Profile
from memgauge.render._layout import Layout
from memgauge.render._training_text import (
    PHASE_IO_HEADERS,
    PROCESS_HEADERS,
    figure_text,
    phase_io_cells,
    process_cells,
    spread_text,
)


def training_section(out: Console, profile: Profile, width: int) -> None:
    t = profile.training
    if t is None:
        return
    layout = Layout(width, f"training throughput: bound by {t.bound}")
    layout.name("figure", most=30)
    layout.figure("steady")
    layout.figure("per step p10-p90")
    layout.rest("note", least=10)
    for f in training_figures(t) + data_movement_figures(t):
        layout.add_row(Text(f.name), Text(figure_text(f)), Text(spread_text(f)), Text(f.note))
    out.print(layout.fit(layout.named("note", "per step p10-p90")))
    if t.verdict:
        out.print(Text(t.verdict, style="bold"))
    if training_cpu_sentence(t):
        out.print(Text(training_cpu_sentence(t)))
    if t.processes:
        procs = Layout(
            width, "processes of the loop (CPU share of each one's lifetime; bytes read and written)"
        )
        procs.name(PROCESS_HEADERS[0], most=40)
        for header in PROCESS_HEADERS[1:]:
            procs.figure(header)
        for p in t.processes:
            procs.add_row(*(Text(cell) for cell in process_cells(p)))
        out.print(procs.fit(procs.named("read", "written")))


def phase_io_section(out: Console, profile: Profile, width: int) -> None:
    """The phases that read or wrote anything: bytes and rates. Nothing where none did."""
    rows = phase_io(profile)
    if not rows:
        return
    layout = Layout(width, "I/O by phase (read and write calls, with their rates; and to storage)")
    layout.name(PHASE_IO_HEADERS[0], most=30)
    for header in PHASE_IO_HEADERS[1:]:
        layout.figure(header)
    for row in rows:
        layout.add_row(*(Text(cell) for cell in phase_io_cells(row)))
    out.print(layout.fit(layout.named("read from storage", "written to storage")))
