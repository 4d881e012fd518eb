"""The remedy table as terminal text and as Markdown (``memgauge fit --remedies``), and the
prediction without the hardware as terminal text (``--predict-gpu``)."""

from __future__ import annotations

from memgauge._units import format_bytes
from memgauge.analysis import GpuPrediction, RemedyTable
from memgauge.render._format import md_table, md_text
from memgauge.render._remedies_cells import HEADERS, cells, footnotes

TITLE = "What each remedy buys (each a fresh run against the same baseline)"


class TerminalRemediesRenderer:
    """Columns padded to their widest cell; figures right-aligned, the remedy's name left."""

    def render(self, table: RemedyTable) -> str:
        rows = [list(HEADERS), *(cells(row) for row in table.rows)]
        widths = [max(len(r[i]) for r in rows) for i in range(len(HEADERS))]
        lines = [TITLE]
        for r in rows:
            first = r[0].ljust(widths[0])
            rest = [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)]
            lines.append("  " + "  ".join([first, *rest]).rstrip())
        lines += ["  " + note for note in footnotes(table)]
        return "\n".join(lines) + "\n"


class MarkdownRemediesRenderer:
    def render(self, table: RemedyTable) -> str:
        aligns = [":---", *(["---:"] * (len(HEADERS) - 1))]
        body = [[md_text(c) for c in cells(row)] for row in table.rows]
        lines = [f"### {TITLE}", "", *md_table(HEADERS, aligns, body), ""]
        lines += [f"- {md_text(note)}" for note in footnotes(table)]
        return "\n".join(lines) + "\n"


class TerminalPredictionRenderer:
    """The prediction without the hardware: each run's tensor peak, the named overheads, the total
    and the largest batch predicted to fit, each figure labelled with what it is."""

    def render(self, prediction: GpuPrediction, parameter: str) -> str:
        lines = [f"Predicted for a GPU of {format_bytes(prediction.gpu_bytes)} (fake tensors, no device)"]
        for step in prediction.steps:
            if step.error is not None:
                lines.append(f"  {parameter}={step.batch}: {step.error}")
                continue
            lines.append(
                f"  {parameter}={step.batch}: tensor peak {format_bytes(step.peak_bytes)}, "
                f"+{format_bytes(step.rounding_bytes)} by the allocator's 512 B rounding"
            )
        lines += [f"  + {format_bytes(size)}: {name}" for name, size in prediction.overheads.items()]
        if prediction.total_bytes is not None:
            lines.append(
                f"  total at {parameter}={prediction.steps[0].batch}: {format_bytes(prediction.total_bytes)}"
            )
        if prediction.largest_batch is not None:
            lines.append(
                f"  largest {parameter} predicted to fit: {prediction.largest_batch} ({prediction.law})"
            )
        elif prediction.total_bytes is not None:
            lines.append(f"  no {parameter} is predicted to fit ({prediction.law})")
        return "\n".join(lines) + "\n"
