"""The GPU section, built once for every format: per device, the five layers and the gap between
each pair, the processes on it, the lines at its peak, its figures, problems and notes. One line
where a torch program had no GPU figures; nothing for other profiles. The figures come from
``analysis.gpu_reconciliation``."""

from __future__ import annotations

from memgauge.model import Profile
from memgauge.render import Block, Column, Items, Paragraph, Section, Table
from memgauge.sections.gpu._analysis import gpu_reconciliation, no_gpu_line
from memgauge.sections.gpu._report_text import (
    device_figures,
    device_title,
    layer_rows,
    peak_line_rows,
    process_rows,
)

_LAYERS = (Column("layer", "name", most=10), Column("peak"), Column("above"), Column("the gap is", "rest"))
_PROCESSES = (Column("pid", "name", most=24), Column("peak"), Column("whose", "rest"))
_LINES = (Column("line", "name", most=60), Column("function", "rest", least=8), Column("allocated"))
_NOTE = (
    "Per device, the peaks of five layers: tensors held (by storage), allocated and reserved by "
    "torch's caching allocator (in the process), used by the process and on the device (NVML, "
    "sampled). Each gap is named; the peaks are taken separately, so a gap is between peaks."
)


def gpu_section(profile: Profile) -> Section | None:
    if not profile.gpu:
        if profile.torch is None:
            return None
        return Section("GPU memory", (Paragraph(no_gpu_line(profile), "dim", anchor="gpu-none"),))
    by_index = {d.index: d for d in profile.gpu}
    blocks: list[Block] = []
    for rec in gpu_reconciliation(profile):
        device = by_index[rec.index]
        layers = tuple(layer_rows(rec))
        blocks.append(
            Table(device_title(rec), _LAYERS, layers, ("the gap is",), "gpu-layers", f"gpu-{rec.index}")
        )
        processes = tuple(process_rows(device))
        if processes:
            blocks.append(Table("processes on the device", _PROCESSES, processes, ("whose",)))
        lines = tuple(peak_line_rows(device))
        if lines:
            title = "lines at the GPU peak (allocated, from the snapshot)"
            blocks.append(Table(title, _LINES, lines, ("function",), "gpu-lines"))
        if device_figures(device):
            blocks.append(Paragraph(device_figures(device)))
        if rec.problems:
            blocks.append(Paragraph(" ".join(rec.problems), "warn"))
        if rec.notes:
            blocks.append(Items(tuple(rec.notes)))
    return Section("GPU memory", tuple(blocks), _NOTE)


# the registry's "report": (id, nav label, builder) of each of the section's report sections, in
# report order
REPORT = (("gpu", "GPU", gpu_section),)
