"""The remedy table's cells, the same for the terminal, Markdown and HTML renderers: figures
formatted once here, so every format shows the same text."""

from __future__ import annotations

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import RemedyRow, RemedyTable
from memgauge.render._format import MISSING, format_ratio, percent

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
