"""The training sections, built once for every format: the loop's throughput (rates, data wait,
FLOPs and MFU over the steady steps with their per-step spread, the sentence on what bounds it,
the processes of the loop) and the I/O of each phase. Nothing for a program without steps: a run
with no training loop has no throughput to show ("steps 0"), only the line naming a framework it
imported whose loop memgauge does not follow. The rows come from ``analysis``."""

from __future__ import annotations

from memgauge.model import Profile
from memgauge.render import Chart, Column, Paragraph, Section, Table
from memgauge.sections.training._analysis import training_figures, training_loop, unfollowed_frameworks
from memgauge.sections.training._analysis_cpu import training_cpu_sentence
from memgauge.sections.training._analysis_io import phase_io
from memgauge.sections.training._analysis_movement import data_movement_figures
from memgauge.sections.training._report_text import (
    PHASE_IO_HEADERS,
    PROCESS_HEADERS,
    figure_text,
    phase_io_cells,
    process_cells,
    spread_text,
)

_FIGURES = (
    Column("figure", "name", most=30),
    Column("steady"),
    Column("per step p10-p90"),
    Column("note", "rest", least=10),
)
_PROCESSES = (Column(PROCESS_HEADERS[0], "name", most=40), *(Column(h) for h in PROCESS_HEADERS[1:]))
_PHASE_IO = (Column(PHASE_IO_HEADERS[0], "name", most=30), *(Column(h) for h in PHASE_IO_HEADERS[1:]))


def training_section(profile: Profile) -> Section | None:
    t = training_loop(profile)
    if t is None:
        line = unfollowed_frameworks(profile)
        return Section("training throughput", (Paragraph(line),)) if line else None
    heading = f"training throughput: bound by {t.bound}"
    # the charts' data is on the page only where steps were timed (``training_data``)
    timed = any(r.seconds for r in t.rows)
    blocks: list[Chart | Table | Paragraph] = []
    if timed:
        blocks += [Chart("chart-training-rate"), Chart("chart-training-wait")]
        if t.cpu is not None and t.cpu.t_seconds:
            blocks.append(Chart("chart-training-cpu-time"))
    rows = tuple(
        (f.name, figure_text(f), spread_text(f), f.note)
        for f in training_figures(t) + data_movement_figures(t)
    )
    blocks.append(Table(heading, _FIGURES, rows, optional=("note", "per step p10-p90")))
    if t.verdict:
        blocks.append(Paragraph(t.verdict, "bad" if t.bound == "data" else "strong"))
    if training_cpu_sentence(t):
        blocks.append(Paragraph(training_cpu_sentence(t)))
    if t.processes:
        title = "processes of the loop (CPU share of each one's lifetime; bytes read and written)"
        cells = tuple(tuple(process_cells(p)) for p in t.processes)
        blocks.append(Table(title, _PROCESSES, cells, optional=("read", "written")))
        if timed and any(p.cpu_share is not None for p in t.processes):
            blocks.append(Chart("chart-training-cpu"))
    return Section(
        heading,
        tuple(blocks),
        "Rates over the steady steps (warm-up and the FLOP-counted step left out), per second of "
        "those steps' own wall time. A step runs from the previous step's end to its optimizer "
        "step (or memgauge.step()); its data wait is the time spent fetching batches in it.",
    )


def phase_io_section(profile: Profile) -> Section | None:
    """The phases that read or wrote anything: bytes and rates. Nothing where none did."""
    rows = tuple(tuple(phase_io_cells(p)) for p in phase_io(profile))
    if not rows:
        return None
    title = "I/O by phase (read and write calls, with their rates; and to storage)"
    table = Table(title, _PHASE_IO, rows, optional=("read from storage", "written to storage"))
    return Section(
        title,
        (table,),
        "The kernel's I/O counters of the phase's process (/proc/self/io) at its start and end: "
        "read and written through calls (pipes, sockets and the page cache included), with their "
        "rates over the phase's time, and what reached storage.",
    )


# the registry's "report": (id, nav label, builder) of each of the section's report sections, in
# report order
REPORT = (("training", "training", training_section), ("phase-io", "I/O", phase_io_section))
