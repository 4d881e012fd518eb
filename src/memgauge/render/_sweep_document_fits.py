"""The sections of the sweep report about the fits, as report document sections: the growth laws
(with their charts), the predictions, and the largest size within the budget with the confirmation
runs; with what every table of the report shares (cells with their tones and the page's sort keys,
a note of the rows not shown, the blocks of the text reports' and of the page's alone).

The page says some of it its own way: a table's sortable figures in columns of their own (the
runner-up and its ΔAICc apart, the number of runs), a missing figure a dim "—", a section's own
heading and note where the text reports have a title of their own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from memgauge.analysis import (
    BudgetRow,
    GrowthRow,
    Prediction,
    PredictionRow,
    SweepAnalysis,
    limit_share,
    runner_up,
)
from memgauge.model import Confirmation, Value
from memgauge.render._document import (
    Block,
    CellTone,
    Column,
    Heading,
    Only,
    Paragraph,
    Section,
    Table,
    TableCell,
)
from memgauge.render._format import percent
from memgauge.render._sweep_charts import chart_grid
from memgauge.render._sweep_words import (
    fixed_text,
    format_metric,
    format_range,
    format_size,
    formula,
    metric_label,
)

# a row's cells
Cells = list[TableCell]
# the page's missing figure: a dim dash, sorted by nothing
_MISSING: tuple[tuple[str, CellTone], ...] = (("—", "dim"),)


def text_only(*blocks: Block) -> Only:
    """Blocks of the terminal and Markdown alone: a title of their own, the page's is its
    section's heading."""
    return Only(("terminal", "markdown"), blocks)


def page_only(*blocks: Block) -> Only:
    return Only(("html",), blocks)


def figure(text: str, key: float | None) -> TableCell:
    """A figure, sorted on the page by ``key``; where there is none (None, or not finite), the
    page's missing figure, whatever the text reports show."""
    if key is None or not math.isfinite(key):
        return TableCell(text, sort=None, page=_MISSING)
    return TableCell(text, sort=key)


def param_key(value: Value) -> float | str:
    """What the page sorts a parameter's value by: a number as a number."""
    return float(value) if isinstance(value, (int, float)) else str(value)


def page_column(column: Column) -> Column:
    """A column of the page's alone."""
    return replace(column, formats=("html",))


def text_column(column: Column) -> Column:
    """A column of the text reports' alone."""
    return replace(column, formats=("terminal", "markdown"))


def toned_table(
    columns: Sequence[Column], rows: Sequence[Cells], optional: Sequence[str] = (), *, left_out: str = ""
) -> Table:
    """A table of ``rows`` whose optional columns are each as good as another: a narrow terminal
    takes one back where a later one made room for it; the page leaves out a column empty in
    every row."""
    return Table(
        "",
        tuple(columns),
        (),
        optional=tuple(optional),
        second_chance=True,
        left_out=left_out,
        cells=tuple(tuple(row) for row in rows),
        drop_empty=True,
    )


def more(shown: int, total: int) -> list[Block]:
    """The rows not shown, counted in each format's words."""
    if total <= shown:
        return []
    text = Paragraph(f"  … {total - shown} more rows not shown", "dim")
    return [text_only(text), page_only(Paragraph(f"{total - shown} more rows not shown.", "dim"))]


def _with(rows: Sequence[GrowthRow] | Sequence[PredictionRow] | Sequence[BudgetRow]) -> bool:
    """Whether any row holds other parameters fixed: a "with" column, or none."""
    return any(row.fixed for row in rows)


_CHARTS_NOTE = (
    " Charts: every run, the chosen law as a line, and the prediction (◆) with its 95% interval; "
    "a grey prediction is not supported."
)


def laws_section(rows: Sequence[GrowthRow], charts: list[dict[str, Any]], most: int) -> Section | None:
    """The laws fitted, with their charts: on the page under a heading and the criterion, in the
    text reports under a title, the criterion after them."""
    if not rows and not charts:
        return None
    criteria = list(dict.fromkeys(row.growth.criterion for row in rows if row.growth is not None))
    blocks: list[Block] = [page_only(chart_grid(charts))]
    if rows:
        title, table = _laws(rows, most)
        blocks = [text_only(Heading(title)), *blocks, table, *more(min(len(rows), most), len(rows))]
        blocks.append(text_only(*(Paragraph(c, "dim") for c in criteria)))
    return Section("growth laws", tuple(blocks), " ".join(criteria) + _CHARTS_NOTE)


def _laws(rows: Sequence[GrowthRow], most: int) -> tuple[str, Table]:
    with_fixed = _with(rows)
    params = list(dict.fromkeys(row.param for row in rows))
    # one size: named in the text reports' title, not on every row; the page names it in each
    against = f" vs {params[0]}" if len(params) == 1 else ""
    vs = Column("vs", "words", code=True)
    columns = [Column("metric", "words"), Column("vs", page=vs) if not against else page_column(vs)]
    columns += [Column("with", "words")] if with_fixed else []
    columns += [Column("law", page=Column("law", "words"))]
    columns += [Column("fit", "label", page=Column("fit", "label", code=True, absent="—"))]
    columns += [Column("R²"), Column("RMS error"), text_column(Column("runner-up (ΔAICc)"))]
    columns += [page_column(Column(h, "words" if h == "runner-up" else "figure")) for h in _PAGE_LAWS]
    body: list[Cells] = []
    for row in rows[:most]:
        cells = [TableCell(metric_label(row.metric)), TableCell(row.param)]
        if with_fixed:
            cells.append(TableCell(fixed_text(row.fixed)))
        body.append(cells + _law_cells(row))
    # the law's name says most; its coefficients, then the evidence for it, go first
    optional = ["runner-up (ΔAICc)", "RMS error", "R²", "fit"] + (["with"] if with_fixed else [])
    return f"growth laws{against} (fitted to every run)", toned_table(columns, body, optional)


# the page's columns of a law after the text reports' one of its runner-up: the runner-up and its
# ΔAICc each sortable, and the runs it was fitted to
_PAGE_LAWS = ("runner-up", "ΔAICc", "runs")


def _law_cells(row: GrowthRow) -> Cells:
    """The law, its fit and the evidence: the text reports' runner-up with its ΔAICc in one cell,
    the page's in two, then the runs it was fitted to."""
    runs = TableCell(str(row.observations), sort=row.observations)
    g = row.growth
    if g is None:
        law = TableCell("—", sort="", page=(("too few runs", "dim"),))
        why = TableCell(f"too few runs ({row.observations})", "dim", None, _MISSING)
        return [law, why, *(figure("", None) for _ in range(5)), runs]
    best = g.best
    other = runner_up(g)
    if other is None:
        up = "—"
    elif math.isfinite(other[1]):
        up = f"{other[0].law} ({other[1]:+.1f})"
    else:
        up = f"{other[0].law} (not compared)"
    delta = other[1] if other is not None and math.isfinite(other[1]) else None
    return [
        TableCell(best.law, "strong"),
        TableCell(formula(best, row.param)),
        figure("—", None) if best.law == "constant" else figure(f"{best.r2:.4f}", best.r2),
        figure(percent(best.rms_relative), best.rms_relative),
        TableCell(up),
        TableCell(other[0].law) if other is not None else figure("", None),
        figure(f"{delta:+.1f}" if delta is not None else "", delta),
        runs,
    ]


def predictions_section(rows: Sequence[PredictionRow], most: int) -> Section | None:
    if not rows:
        return None
    param, target = rows[0].param, rows[0].target
    with_fixed = _with(rows)
    columns = [Column("metric", "words"), page_column(Column("at", "words"))]
    columns += [Column("with", "words")] if with_fixed else []
    columns += [Column("predicted"), Column("interval", page=Column("95% interval"))]
    columns.append(Column("", "words", page=Column("status", "words")))
    at = f"{param}={format_size(target)}"
    body: list[Cells] = []
    for row in rows[:most]:
        cells = [TableCell(metric_label(row.metric)), TableCell(at)]
        if with_fixed:
            cells.append(TableCell(fixed_text(row.fixed)))
        body.append(cells + _prediction_cells(row, row.prediction))
    title = f"predictions at {param}={format_size(target)} (95% interval)"
    blocks = [text_only(Heading(title)), toned_table(columns, body), *more(min(len(rows), most), len(rows))]
    note = (
        "The chosen law's value for one new run, with its 95% prediction interval. A prediction "
        "the fit does not support is shown in parentheses, with the reason."
    )
    return Section("predictions", tuple(blocks), note)


def _prediction_cells(row: PredictionRow, p: Prediction | None) -> Cells:
    if p is None:
        why = TableCell(
            f"no prediction: {row.reason}", "warn", "", ((row.reason or "no prediction", "warn"),)
        )
        return [figure("—", None), figure("—", None), why]
    value, interval = format_metric(row.metric, p.value), format_range(row.metric, p.low, p.high)
    high = p.high if math.isfinite(p.high) else None
    if p.supported:
        return [TableCell(value, "strong", p.value), TableCell(interval, sort=high), TableCell("ok", "good")]
    # the figure stays, in parentheses and dim: the reader sees it is not to be trusted
    return [
        TableCell(f"({value})", "dim", p.value),
        TableCell(f"({interval})", "dim", high),
        TableCell(f"not supported: {p.reason}", "warn", "not supported"),
    ]


def budget_section(a: SweepAnalysis, most: int) -> Section | None:
    rows, confirmations = a.budget, a.result.confirmations
    if not rows and not confirmations:
        return None
    param = rows[0].param if rows else a.size or "size"
    title = f"largest {param} within the budget"
    blocks: list[Block] = _budget(a, most, title) if rows else []
    if confirmations:
        shown = confirmations[:most]
        table = toned_table(_CONFIRMATION_COLUMNS, [_confirmation_cells(c) for c in shown], ("predicted",))
        blocks += [Heading("confirmation runs"), table, *more(len(shown), len(confirmations))]
    note = (
        "The largest size at which the high end of the 95% interval stays within the limit at "
        "every size up to it; a confirmation run measures it."
    )
    return Section(title, tuple(blocks), note)


def _budget(a: SweepAnalysis, most: int, title: str) -> list[Block]:
    rows = a.budget
    several = len({row.limit_text for row in rows}) > 1
    with_fixed = _with(rows)
    columns = [Column("limit", "words")] + ([Column("with", "words")] if with_fixed else [])
    columns += [Column("largest"), Column("predicted"), Column("high bound"), Column("of limit")]
    notes = [_note(row, several and row in a.binding) for row in rows[:most]]
    # an empty column would take the width a figure could have
    with_notes = any(note.text for note in notes)
    if with_notes:
        columns.append(Column("note", "words"))
    body: list[Cells] = []
    for row, note in zip(rows, notes, strict=False):
        cells = [TableCell(row.limit_text)]
        if with_fixed:
            cells.append(TableCell(fixed_text(row.fixed)))
        body.append(cells + _budget_cells(row) + ([note] if with_notes else []))
    table = toned_table(columns, body, ("of limit", "high bound", "predicted"))
    # the title is the page's section heading: the page leaves it out here
    return [Heading(title), table, *more(min(len(rows), most), len(rows))]


def _note(row: BudgetRow, binding: bool) -> TableCell:
    """Why a row says what it says; the binding limit's, where there are several, first (bold on
    the page, where the note is no caution)."""
    why = row.reason or ""
    parts: tuple[tuple[str, CellTone], ...] = ((why, ""),)
    if binding:
        parts = (("binding", "strong"), *(((f"; {why}", ""),) if why else ()))
        why = "binding" + (f"; {why}" if why else "")
    fits = row.status == "fits"
    return TableCell(why, "" if fits else "warn", (row.reason or "") if fits else row.reason, parts)


def _budget_cells(row: BudgetRow) -> Cells:
    none = [figure("", None) for _ in range(3)]
    if row.status == "none":
        return [TableCell("none fits", "alarm", -1.0), *none]
    if row.status != "fits" or row.largest is None:
        return [TableCell("unknown", "warn", None, (("unknown", "dim"),)), *none]
    p = row.prediction
    used = row.margin_used
    value, high = (p.value, p.high) if p else (None, None)
    return [
        TableCell(f"{row.param} = {format_size(row.largest)}", "strong", row.largest),
        figure(format_metric(row.metric, value), value),
        figure(format_metric(row.metric, high), high),
        figure(percent(used) if used is not None else "—", used),
    ]


# the share tells a run 2% over from one at the limit when both read "1.0 GiB"
_CONFIRMATION_COLUMNS = (
    Column("at", "words"),
    Column("metric", "words"),
    Column("predicted"),
    Column("measured"),
    Column("limit"),
    Column("of limit"),
    Column("", page=Column("verdict", "words")),
)


def _confirmation_cells(c: Confirmation) -> Cells:
    fits = c.fits
    verdict = (
        TableCell("not measured", "warn", "", (("not measured", "dim"),))
        if fits is None
        else TableCell("fits", "good")
        if fits
        else TableCell("OVER", "alarm")
    )
    share = limit_share(c)
    return [
        TableCell(fixed_text(c.params)),
        TableCell(metric_label(c.metric)),
        figure(format_metric(c.metric, c.predicted), c.predicted),
        figure(format_metric(c.metric, c.measured), c.measured),
        figure(format_metric(c.metric, c.limit), c.limit),
        figure(percent(share) if share is not None else "—", share),
        verdict,
    ]
