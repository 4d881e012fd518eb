"""The training section of the Markdown report: the figures over the steady steps with their
per-step spread, and the sentence on what bounds the loop. Nothing for a profile without training
figures. The rows come from ``analysis.training_figures``."""

from __future__ import annotations

from memgauge.analysis import training_figures
from memgauge.model import Profile
from memgauge.render._format import md_table, md_text
from memgauge.render._training_text import PROCESS_HEADERS, figure_text, process_cells, spread_text


def training_blocks(profile: Profile) -> list[list[str]]:
    t = profile.training
    if t is None:
        return []
    rows = [[md_text(f.name), figure_text(f), spread_text(f), md_text(f.note)] for f in training_figures(t)]
    blocks = [
        [f"**training throughput: bound by {md_text(t.bound)}**"],
        md_table(["figure", "steady", "per step p10-p90", "note"], [":---", "---:", "---:", ":---"], rows),
    ]
    if t.verdict:
        blocks.append([md_text(t.verdict)])
    if t.processes:
        rows = [[md_text(cell) for cell in process_cells(p)] for p in t.processes]
        blocks.append(md_table(PROCESS_HEADERS, [":---"] + ["---:"] * (len(PROCESS_HEADERS) - 1), rows))
    return blocks
