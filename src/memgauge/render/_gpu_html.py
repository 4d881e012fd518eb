"""The GPU section of the HTML report: per device, the five layers and the gap between each pair.
One line where a torch program had no GPU figures; no section for other profiles."""

from __future__ import annotations

from memgauge.analysis import gpu_reconciliation, no_gpu_line
from memgauge.render._format import esc
from memgauge.render._gpu_text import device_figures, device_title, layer_rows, peak_line_rows, process_rows
from memgauge.render._html_page import Part, items, table, text
from memgauge.render._html_tables import ProfileView


def gpu_section(v: ProfileView) -> Part | None:
    profile = v.profile
    if not profile.gpu:
        if profile.torch is None:
            return None
        return Part(f'<p class="note" id="gpu-none">{esc(no_gpu_line(profile))}</p>', "GPU memory")
    by_index = {d.index: d for d in profile.gpu}
    parts: list[str] = []
    for rec in gpu_reconciliation(profile):
        device = by_index[rec.index]
        parts.append(f'<h3 id="gpu-{rec.index}">{esc(device_title(rec))}</h3>')
        headers = [("layer", False), ("peak", True), ("above", True), ("the gap is", False)]
        parts.append(
            table(headers, [[text(cell) for cell in row] for row in layer_rows(rec)], cls="gpu-layers")
        )
        processes = process_rows(device)
        if processes:
            rows = [[text(cell) for cell in row] for row in processes]
            parts.append(table([("pid", False), ("peak", True), ("whose", False)], rows))
        peak_lines = peak_line_rows(device)
        if peak_lines:
            rows = [[text(cell) for cell in row] for row in peak_lines]
            headers = [("line at the GPU peak", False), ("function", False), ("allocated", True)]
            parts.append(table(headers, rows, cls="gpu-lines"))
        figures = device_figures(device)
        if figures:
            parts.append(f"<p>{esc(figures)}</p>")
        if rec.problems:
            parts.append(f'<p class="bad">{esc(" ".join(rec.problems))}</p>')
        parts.append(items(rec.notes))
    return Part(
        "".join(parts),
        "GPU memory",
        "Per device, the peaks of five layers: tensors held (by storage), allocated and reserved by "
        "torch's caching allocator (in the process), used by the process and on the device (NVML, "
        "sampled). Each gap is named; the peaks are taken separately, so a gap is between peaks.",
    )
