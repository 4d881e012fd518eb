"""The training section of the Markdown report: the figures over the steady steps with their
per-step spread, and the sentence on what bounds the loop. Nothing for a profile without training
figures. The rows come from ``analysis.training_figures``."""

from __future__ import annotations

from memgauge.analysis import data_movement_figures, phase_io, training_cpu_sentence, training_figures
from memgauge.model import Profile
from memgauge.render._format import md_table, md_text
from memgauge.render._training_text import (
    PHASE_IO_HEADERS,
    PROCESS_HEADERS,
    figure_text,
    phase_io_cells,
    process_cells,
    spread_text,
)


def training_blocks(profile: Profile) -> list[list[str]]:
    t = profile.training
    if t is None:
        return []
    rows = [
        [md_text(f.name), figure_text(f), spread_text(f), md_text(f.note)]
        for f in training_figures(t) + data_movement_figures(t)
    ]
    blocks = [
        [f"**training throughput: bound by {md_text(t.bound)}**"],
        md_table(["figure", "steady", "per step p10-p90", "note"], [":---", "---:", "---:", ":---"], rows),
    ]
    if t.verdict:
        blocks.append([md_text(t.verdict)])
    if training_cpu_sentence(t):
        blocks.append([md_text(training_cpu_sentence(t))])
    if t.processes:
        rows = [[md_text(cell) for cell in process_cells(p)] for p in t.processes]
        blocks.append(md_table(PROCESS_HEADERS, [":---"] + ["---:"] * (len(PROCESS_HEADERS) - 1), rows))
    return blocks


def phase_io_blocks(profile: Profile) -> list[list[str]]:
    """The phases that read or wrote anything: bytes and rates. Nothing where none did."""
    rows = [[md_text(cell) for cell in phase_io_cells(p)] for p in phase_io(profile)]
    if not rows:
        return []
    aligns = [":---"] + ["---:"] * (len(PHASE_IO_HEADERS) - 1)
    return [["**I/O by phase**"], md_table(PHASE_IO_HEADERS, aligns, rows)]
