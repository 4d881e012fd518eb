"""The GPU section of the terminal report: per device, the five layers and the gap between each
pair. One line where a torch program had no GPU figures; nothing for other profiles, so their
reports are unchanged."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from memgauge.analysis import gpu_reconciliation, no_gpu_line
from memgauge.model import Profile
from memgauge.render._gpu_text import device_figures, device_title, layer_rows, peak_line_rows, process_rows
from memgauge.render._layout import Layout


def gpu_section(out: Console, profile: Profile, width: int) -> None:
    if not profile.gpu:
        if profile.torch is not None:
            out.print(Text(no_gpu_line(profile), style="dim"))
        return
    by_index = {d.index: d for d in profile.gpu}
    for rec in gpu_reconciliation(profile):
        device = by_index[rec.index]
        layout = Layout(width, device_title(rec))
        layout.name("layer", most=10)
        layout.figure("peak")
        layout.figure("above")
        layout.rest("the gap is", least=10)
        for row in layer_rows(rec):
            layout.add_row(*(Text(cell) for cell in row))
        out.print(layout.fit(layout.named("the gap is")))
        processes = process_rows(device)
        if processes:
            table = Layout(width, "processes on the device")
            table.name("pid", most=24)
            table.figure("peak")
            table.rest("whose", least=10)
            for prow in processes:
                table.add_row(*(Text(cell) for cell in prow))
            out.print(table.fit(table.named("whose")))
        lines = peak_line_rows(device)
        if lines:
            table = Layout(width, "lines at the GPU peak (allocated, from the snapshot)")
            table.name("line", most=60)
            table.rest("function", least=8)
            table.figure("bytes")
            for lrow in lines:
                table.add_row(*(Text(cell) for cell in lrow))
            out.print(table.fit(table.named("function")))
        figures = device_figures(device)
        if figures:
            out.print(Text(figures))
        for problem in rec.problems:
            out.print(Text(problem, style="yellow"))
        for note in rec.notes:
            out.print(Text(note, style="dim"))
