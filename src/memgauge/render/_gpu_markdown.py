"""The GPU section of the Markdown report: per device, the five layers and the gap between each
pair. One line where a torch program had no GPU figures; nothing for other profiles."""

from __future__ import annotations

from memgauge.analysis import gpu_reconciliation, no_gpu_line
from memgauge.model import Profile
from memgauge.render._format import md_table, md_text
from memgauge.render._gpu_text import device_figures, device_title, layer_rows, peak_line_rows, process_rows


def gpu_blocks(profile: Profile) -> list[list[str]]:
    if not profile.gpu:
        return [[md_text(no_gpu_line(profile))]] if profile.torch is not None else []
    by_index = {d.index: d for d in profile.gpu}
    blocks: list[list[str]] = []
    for rec in gpu_reconciliation(profile):
        device = by_index[rec.index]
        rows = [[md_text(cell) for cell in row] for row in layer_rows(rec)]
        # blank line between: a table straight under a paragraph line would take it as its header
        blocks.append([f"**{md_text(device_title(rec))}**"])
        blocks.append(
            md_table(["layer", "peak", "above", "the gap is"], [":---", "---:", "---:", ":---"], rows)
        )
        processes = process_rows(device)
        if processes:
            cells = [[md_text(cell) for cell in row] for row in processes]
            blocks.append(md_table(["pid", "peak", "whose"], [":---", "---:", ":---"], cells))
        peak_lines = peak_line_rows(device)
        if peak_lines:
            cells = [[md_text(cell) for cell in row] for row in peak_lines]
            headers = ["line at the GPU peak", "function", "allocated"]
            blocks.append(md_table(headers, [":---", ":---", "---:"], cells))
        lines = [device_figures(device), *rec.problems, *rec.notes]
        if any(lines):
            blocks.append([f"- {md_text(line)}" for line in lines if line])
    return blocks
