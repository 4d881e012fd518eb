"""What ``memgauge fit --remedies`` and ``--predict-gpu`` add to the fit's report, built once on the
report document: the remedy table with its notes, and the prediction without the hardware. The
terminal, Markdown and HTML renderers (``_remedies_text``, ``_remedies_html``) render it."""

from __future__ import annotations

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import GpuPrediction, RemedyRow, RemedyTable
from memgauge.render._document import Block, Column, Heading, Items, Section, Table
from memgauge.render._document_report import Report, sentence
from memgauge.render._format import MISSING, format_ratio, percent

TITLE = "What each remedy buys (each a fresh run against the same baseline)"

HEADERS = (
    "remedy",
    "tensor peak",
    "vs baseline",
    "activations",
    "gradients",
    "resident peak",
    "resident vs baseline",
    "step",
    "step vs baseline",
    "batch",
    "largest batch",
)
# the remedy's name, whole, then its figures; a narrow terminal leaves out the absolute figures
# first (the resident peak's and the step's change against the baseline stay), the tensor peak's
# change before the tensor peak itself
_COLUMNS = (Column(HEADERS[0], role="name", least=24), *(Column(h) for h in HEADERS[1:]))
_OPTIONAL = ("gradients", "activations", "batch", "step", "resident peak", "vs baseline", "tensor peak")


def _bytes(value: int | None) -> str:
    return MISSING if value is None else format_bytes(value)


def _delta(fraction: float | None) -> str:
    if fraction is None:
        return MISSING
    return ("+" if fraction > 0 else "") + percent(fraction)


def cells(row: RemedyRow) -> list[str]:
    """One row's figures, in the order of ``HEADERS``; ``—`` where not measured."""
    roles = row.peak_by_role
    return [
        row.name if row.applied else f"{row.name} (not applied)",
        _bytes(row.tensor_peak_bytes),
        _delta(row.tensor_delta),
        _bytes(roles.get("activations")) if row.applied and roles else MISSING,
        _bytes(roles.get("gradients")) if row.applied and roles else MISSING,
        _bytes(row.rss_peak_bytes),
        _delta(row.rss_delta),
        MISSING if row.step_seconds is None else format_seconds(row.step_seconds),
        format_ratio(row.step_ratio),
        MISSING if row.effective_batch is None else str(row.effective_batch),
        MISSING if row.largest_batch is None else str(row.largest_batch),
    ]


def footnotes(table: RemedyTable) -> list[str]:
    """What each row hooked and why a remedy did not apply, one line each, then how the largest
    batch was found."""
    lines: list[str] = []
    for row in table.rows:
        lines += [f"{row.name}: hooked {hook.partition(': ')[2] or hook}" for hook in row.hooked]
        # a hook's own notes start with its name already
        lines += [f"{row.name}: {note.removeprefix(f'{row.name}: ')}" for note in row.notes]
    if table.budget_bytes is not None:
        lines.append(f"largest batch under {format_bytes(table.budget_bytes)} resident: {table.law}")
    return lines


def remedies_report(table: RemedyTable) -> Report:
    """The table and its notes (what each row hooked, why a remedy did not apply). A figure no
    row has is left out (a program without torch has no tensor peak, no step time): the JSON
    record keeps every field."""
    rows = [cells(row) for row in table.rows]
    keep = [i for i in range(len(_COLUMNS)) if i == 0 or any(row[i] != MISSING for row in rows)]
    columns = tuple(_COLUMNS[i] for i in keep)
    shown = tuple(tuple(row[i] for i in keep) for row in rows)
    # the title a heading of its own: a table under its title would be stretched to its width
    blocks: tuple[Block, ...] = (
        Heading(TITLE),
        Table("", columns, shown, optional=_OPTIONAL, cls="remedies"),
    )
    notes = footnotes(table)
    if notes:
        blocks += (Items(tuple(notes)),)
    return Report(None, (("remedies", Section(TITLE, blocks)),))


def prediction_report(prediction: GpuPrediction, parameter: str) -> Report:
    """Each run's tensor peak, the named overheads, the total and the largest batch predicted to
    fit, each figure labelled with what it is."""
    title = f"Predicted for a GPU of {format_bytes(prediction.gpu_bytes)} (fake tensors, no device)"
    lines = []
    for step in prediction.steps:
        if step.error is not None:
            lines.append(f"{parameter}={step.batch}: {step.error}")
            continue
        lines.append(
            f"{parameter}={step.batch}: tensor peak {format_bytes(step.peak_bytes)}, "
            f"+{format_bytes(step.rounding_bytes)} by the allocator's 512 B rounding"
        )
    lines += [f"+ {format_bytes(size)}: {name}" for name, size in prediction.overheads.items()]
    if prediction.total_bytes is not None:
        total = format_bytes(prediction.total_bytes)
        lines.append(f"total at {parameter}={prediction.steps[0].batch}: {total}")
    if prediction.largest_batch is not None:
        lines.append(f"largest {parameter} predicted to fit: {prediction.largest_batch} ({prediction.law})")
    elif prediction.total_bytes is not None:
        lines.append(f"no {parameter} is predicted to fit ({prediction.law})")
    blocks: tuple[Block, ...] = (Heading(title), *(sentence(text, lead="  ", item=True) for text in lines))
    return Report(None, (("prediction", Section(title, blocks)),))
