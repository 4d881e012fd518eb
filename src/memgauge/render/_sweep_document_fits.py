"""The sections of the sweep report about the fits, as report document sections: the growth laws,
the predictions, the largest size within the budget and the confirmation runs; with what every
table of the report shares (cells with their tones, a note of the rows not shown)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from memgauge.analysis import (
    BudgetRow,
    GrowthRow,
    Prediction,
    PredictionRow,
    SweepAnalysis,
    limit_share,
    runner_up,
)
from memgauge.model import SweepResult
from memgauge.render._document import Block, CellTone, Column, Heading, Paragraph, Section, Table
from memgauge.render._format import percent
from memgauge.render._sweep_words import (
    fixed_text,
    format_metric,
    format_range,
    format_size,
    formula,
    metric_label,
)

# a row's cells, each its text and its tone
Cells = list[tuple[str, CellTone]]


def toned_table(
    columns: Sequence[Column], rows: Sequence[Cells], optional: Sequence[str] = (), *, left_out: str = ""
) -> Table:
    """A table of ``rows`` whose optional columns are each as good as another: a narrow terminal
    takes one back where a later one made room for it."""
    return Table(
        "",
        tuple(columns),
        tuple(tuple(text for text, _ in row) for row in rows),
        optional=tuple(optional),
        tones=tuple(tuple(tone for _, tone in row) for row in rows),
        second_chance=True,
        left_out=left_out,
    )


def more(shown: int, total: int) -> list[Block]:
    return [Paragraph(f"  … {total - shown} more rows not shown", "dim")] if total > shown else []


def _with(rows: Sequence[GrowthRow] | Sequence[PredictionRow] | Sequence[BudgetRow]) -> bool:
    """Whether any row holds other parameters fixed: a "with" column, or none."""
    return any(row.fixed for row in rows)


def laws_section(rows: Sequence[GrowthRow], most: int) -> Section | None:
    if not rows:
        return None
    with_fixed = _with(rows)
    params = list(dict.fromkeys(row.param for row in rows))
    # one size: named in the title, not on every row
    against = f" vs {params[0]}" if len(params) == 1 else ""
    columns = [Column("metric", "words")] + ([] if against else [Column("vs")])
    columns += [Column("with", "words")] if with_fixed else []
    columns += [Column("law"), Column("fit", "label"), Column("R²"), Column("RMS error")]
    columns.append(Column("runner-up (ΔAICc)"))
    body: list[Cells] = []
    for row in rows[:most]:
        cells: Cells = [(metric_label(row.metric), "")]
        if not against:
            cells.append((row.param, ""))
        if with_fixed:
            cells.append((fixed_text(row.fixed), ""))
        body.append(cells + _law_cells(row))
    # the law's name says most; its coefficients, then the evidence for it, go first
    optional = ["runner-up (ΔAICc)", "RMS error", "R²", "fit"] + (["with"] if with_fixed else [])
    title = f"growth laws{against} (fitted to every run)"
    criteria = dict.fromkeys(row.growth.criterion for row in rows if row.growth is not None)
    blocks = [Heading(title), toned_table(columns, body, optional), *more(min(len(rows), most), len(rows))]
    blocks += [Paragraph(text, "dim") for text in criteria]
    return Section(title, tuple(blocks))


def _law_cells(row: GrowthRow) -> Cells:
    g = row.growth
    if g is None:
        return [("—", ""), (f"too few runs ({row.observations})", "dim"), ("", ""), ("", ""), ("", "")]
    best = g.best
    other = runner_up(g)
    if other is None:
        up = "—"
    elif math.isfinite(other[1]):
        up = f"{other[0].law} ({other[1]:+.1f})"
    else:
        up = f"{other[0].law} (not compared)"
    return [
        (best.law, "strong"),
        (formula(best, row.param), ""),
        (f"{best.r2:.4f}" if best.law != "constant" else "—", ""),
        (percent(best.rms_relative), ""),
        (up, ""),
    ]


def predictions_section(rows: Sequence[PredictionRow], most: int) -> Section | None:
    if not rows:
        return None
    param, target = rows[0].param, rows[0].target
    with_fixed = _with(rows)
    columns = [Column("metric", "words")] + ([Column("with", "words")] if with_fixed else [])
    columns += [Column("predicted"), Column("interval"), Column("", "words")]
    body: list[Cells] = []
    for row in rows[:most]:
        cells: Cells = [(metric_label(row.metric), "")]
        if with_fixed:
            cells.append((fixed_text(row.fixed), ""))
        body.append(cells + _prediction_cells(row, row.prediction))
    title = f"predictions at {param}={format_size(target)} (95% interval)"
    blocks = [Heading(title), toned_table(columns, body), *more(min(len(rows), most), len(rows))]
    return Section(title, tuple(blocks))


def _prediction_cells(row: PredictionRow, p: Prediction | None) -> Cells:
    if p is None:
        return [("—", ""), ("—", ""), (f"no prediction: {row.reason}", "warn")]
    value, interval = format_metric(row.metric, p.value), format_range(row.metric, p.low, p.high)
    if p.supported:
        return [(value, "strong"), (interval, ""), ("ok", "good")]
    # the figure stays, in parentheses and dim: the reader sees it is not to be trusted
    return [(f"({value})", "dim"), (f"({interval})", "dim"), (f"not supported: {p.reason}", "warn")]


def budget_section(a: SweepAnalysis, most: int) -> Section | None:
    rows = a.budget
    if not rows:
        return None
    several = len({row.limit_text for row in rows}) > 1
    with_fixed = _with(rows)
    columns = [Column("limit", "words")] + ([Column("with", "words")] if with_fixed else [])
    columns += [Column("largest"), Column("predicted"), Column("high bound"), Column("of limit")]
    notes: Cells = []
    for row in rows[:most]:
        why = row.reason or ""
        if several and row in a.binding:
            why = "binding" + (f"; {why}" if why else "")
        notes.append((why, "warn" if row.status != "fits" else ""))
    # an empty column would take the width a figure could have
    with_notes = any(text for text, _ in notes)
    if with_notes:
        columns.append(Column("note", "words"))
    body: list[Cells] = []
    for row, note in zip(rows, notes, strict=False):
        cells: Cells = [(row.limit_text, "")]
        if with_fixed:
            cells.append((fixed_text(row.fixed), ""))
        body.append(cells + _budget_cells(row) + ([note] if with_notes else []))
    title = f"largest {rows[0].param} within the budget"
    table = toned_table(columns, body, ("of limit", "high bound", "predicted"))
    return Section(title, (Heading(title), table, *more(min(len(rows), most), len(rows))))


def _budget_cells(row: BudgetRow) -> Cells:
    if row.status == "none":
        return [("none fits", "bad"), ("", ""), ("", ""), ("", "")]
    if row.status != "fits" or row.largest is None:
        return [("unknown", "warn"), ("", ""), ("", ""), ("", "")]
    p = row.prediction
    used = row.margin_used
    return [
        (f"{row.param} = {format_size(row.largest)}", "strong"),
        (format_metric(row.metric, p.value if p else None), ""),
        (format_metric(row.metric, p.high if p else None), ""),
        (percent(used) if used is not None else "—", ""),
    ]


def confirmations_section(r: SweepResult) -> Section | None:
    if not r.confirmations:
        return None
    columns = [Column("at", "words"), Column("metric", "words"), Column("predicted"), Column("measured")]
    # the share tells a run 2% over from one at the limit when both read "1.0 GiB"
    columns += [Column("limit"), Column("of limit"), Column("")]
    body: list[Cells] = []
    for c in r.confirmations:
        fits = c.fits
        verdict: tuple[str, CellTone] = (
            ("not measured", "warn") if fits is None else ("fits", "good") if fits else ("OVER", "bad")
        )
        share = limit_share(c)
        body.append(
            [
                (fixed_text(c.params), ""),
                (metric_label(c.metric), ""),
                (format_metric(c.metric, c.predicted), ""),
                (format_metric(c.metric, c.measured), ""),
                (format_metric(c.metric, c.limit), ""),
                (percent(share) if share is not None else "—", ""),
                verdict,
            ]
        )
    title = "confirmation runs"
    return Section(title, (Heading(title), toned_table(columns, body, ("predicted",))))
