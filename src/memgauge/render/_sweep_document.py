"""The report of ``memgauge sweep`` as report document sections, built once: the header, the
points, the phases, the fits (``_sweep_document_fits``), the phases' shares of the wall time, the
worker scaling and the notes, in report order. The terminal and Markdown render them with the
document's backends.

Each table's title is a ``Heading`` of its own, not the table's: on the terminal a table as wide
as its title would spread short figures apart, and a title as narrow as its table would wrap.
Figures are never cut (a narrow terminal leaves out a table's optional columns, least useful
first); only text (metric names, reasons) wraps, between words.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import (
    PhaseShares,
    ScalingRow,
    SweepAnalysis,
    exit_summary,
    failed_runs,
    is_numeric,
    points_measured,
    run_metrics,
    share_rows,
    top_phases,
)
from memgauge.model import Point, SweepResult
from memgauge.render._document import Block, Column, Heading, Line, Paragraph, Section, Span
from memgauge.render._format import DASH, format_number, percent
from memgauge.render._sweep_document_fits import (
    Cells,
    budget_section,
    confirmations_section,
    laws_section,
    more,
    predictions_section,
    toned_table,
)
from memgauge.render._sweep_words import KNEE_NOTE, fixed_text, format_metric, format_range, format_value

MAX_ROWS = 200  # a table's rows: more are counted, not shown
_FAILURES = 5  # the failed runs whose last line is quoted under the points


def sweep_sections(a: SweepAnalysis, max_rows: int = MAX_ROWS) -> list[Section]:
    """The report's sections with something to say, in report order."""
    r = a.result
    builds: list[Callable[[], Section | None]] = [
        lambda: _header(r),
        lambda: _points(r, max_rows),
        lambda: _phases(r, max_rows),
        lambda: laws_section(a.laws, max_rows),
        lambda: predictions_section(a.predictions, max_rows),
        lambda: budget_section(a, max_rows),
        lambda: confirmations_section(r),
        *(lambda s=s: _shares(s) for s in a.shares),
        *(lambda row=row: _scaling(row) for row in a.scaling),
        lambda: _notes(a.notes),
    ]
    return [s for build in builds if (s := build()) is not None]


def _header(r: SweepResult) -> Section:
    measured, total = points_measured(r)
    engine = f"engine {r.engine}" + (f" (concurrency {r.concurrency})" if r.concurrency else "")
    outcome = Span("complete", "good") if r.complete else Span("interrupted", "bad")
    parts = [(Span(engine + " ·"),), (Span(f"repeat {r.repeat} ·"),)]
    parts += [(Span(f"{measured} of {total} points measured ·"),), (outcome,)]
    blocks: list[Block] = [Heading("memgauge sweep", code=shlex.join(r.command), level=3), Line(tuple(parts))]
    varied = [f"{k} ({len(v)} values)" for k, v in r.params.items() if len(v) > 1]
    constant = [f"{k}={format_value(v[0])}" for k, v in r.params.items() if len(v) == 1]
    line: list[list[Span]] = []
    if varied:
        line.append([Span("varied:", "dim")])
        line += [[Span(v + ("," if i < len(varied) - 1 else ""))] for i, v in enumerate(varied)]
    if constant:
        if line:
            line[-1].append(Span(" ·"))
        line.append([Span("fixed:", "dim")])
        line += [[Span(c)] for c in constant]
    if line:
        blocks.append(Line(tuple(tuple(part) for part in line)))
    return Section("", tuple(blocks))


def _param_columns(r: SweepResult) -> tuple[list[str], list[Column]]:
    """The parameters a table's rows are told apart by, and their columns: a number's is a
    figure, a name's words."""
    varied = r.varied() or list(r.params)
    return varied, [Column(n, "figure" if is_numeric(r.params[n]) else "words") for n in varied]


def _param_cells(p: Point, names: list[str]) -> Cells:
    return [(format_value(p.params[n]) if n in p.params else "—", "") for n in names]


def _points(r: SweepResult, most: int) -> Section | None:
    if not r.points:
        return None
    varied, columns = _param_columns(r)
    metrics = run_metrics(r)
    spread = [Column(f"peak min{DASH}max")] if r.repeat > 1 else []
    columns += [Column("peak"), *spread, Column("wall"), Column("CPU"), Column("exit", "words")]
    columns += [Column(m) for m in metrics]
    shown = r.points[:most]
    rows: list[Cells] = []
    for p in shown:
        cells = _param_cells(p, varied)
        cells.append((format_metric("rss", p.median("rss")), ""))
        if spread:
            values = p.values("rss")
            cells.append((format_range("rss", min(values), max(values)) if len(values) > 1 else "", ""))
        cells += [(format_metric("wall", p.median("wall")), ""), (format_metric("cpu", p.median("cpu")), "")]
        summary = exit_summary(p, r.repeat)
        cells.append((summary, "" if summary.startswith("ok") else "bad"))
        cells += [(format_metric(f"metric:{m}", p.median(f"metric:{m}")), "") for m in metrics]
        rows.append(cells)
    optional = (*(c.header for c in spread), "CPU", *metrics[::-1])
    runs = f", medians of {r.repeat} runs" if r.repeat > 1 else ""
    title = f"points ({len(r.points)}{runs})"
    table = toned_table(columns, rows, optional)
    blocks = [Heading(title), table, *more(len(shown), len(r.points)), *_failures(r)]
    return Section(title, tuple(blocks))


def _failures(r: SweepResult) -> list[Block]:
    """The last line a failed run printed (where its traceback ends): the record keeps the end
    of its output for this, and "exit 1" alone does not say why. One line per run: a program's
    long line is cut."""
    failed = failed_runs(r)
    blocks: list[Block] = []
    for p, i, run in failed[:_FAILURES]:
        last = [line.strip() for line in run.output_tail.splitlines() if line.strip()][-1]
        which = f" run {i}" if r.repeat > 1 else ""
        blocks.append(Paragraph(f"  {fixed_text(p.params)}{which} ({run.exit}): {last}", "bad", cut=True))
    return blocks + more(min(len(failed), _FAILURES), len(failed))


def _phase_cell(p: Point, name: str) -> str:
    peak, seconds = p.median(f"phase:{name}.peak"), p.median(f"phase:{name}.seconds")
    if peak is None or seconds is None:
        return "—"
    return f"{format_bytes(peak)} / {format_seconds(seconds)}"


def _phases(r: SweepResult, most: int) -> Section | None:
    names = top_phases(r)
    if not names:
        return None
    varied, columns = _param_columns(r)
    phases = [Column(f"{name} peak / time", short=name) for name in names]
    shown = r.points[:most]
    rows = [_param_cells(p, varied) + [(_phase_cell(p, n), "") for n in names] for p in shown]
    optional = tuple(c.header for c in phases[:0:-1])
    table = toned_table(columns + phases, rows, optional, left_out="left out to fit the width")
    title = "phases (medians: peak / time)"
    return Section(title, (Heading(title), table, *more(len(shown), len(r.points))))


def _shares(s: PhaseShares) -> Section:
    where = f" ({fixed_text(s.fixed)})" if s.fixed else ""
    title = f"share of wall time by phase, vs {s.param}{where}"
    columns = [Column(s.param), *(Column(name) for name in s.phases), Column("other")]
    rows: list[Cells] = [
        [(format_value(x), ""), *((percent(v), "") for v in row), (percent(other), "")]
        for x, row, other in share_rows(s)
    ]
    table = toned_table(columns, rows, tuple(s.phases[:0:-1]))
    return Section(title, (Heading(title), table))


def _scaling(row: ScalingRow) -> Section:
    sc = row.scaling
    where = f" ({fixed_text(row.fixed)})" if row.fixed else ""
    title = f"worker scaling: {row.metric} per second vs {row.param}{where}"
    columns = [Column(row.param), Column("throughput"), Column("speedup"), Column("efficiency")]
    columns.append(Column("", "words"))
    rows: list[Cells] = []
    for p in sc.points:
        knee = sc.knee is not None and p.workers == sc.knee
        rows.append(
            [
                (format_number(p.workers), "strong" if knee else ""),
                (format_metric(f"throughput:{row.metric}", p.throughput), ""),
                (f"{p.speedup:.2f}x", ""),
                (percent(p.efficiency), ""),
                (KNEE_NOTE, "warn") if knee else ("", ""),
            ]
        )
    blocks: list[Block] = [Heading(title), toned_table(columns, rows, ("efficiency",))]
    if sc.knee is None and sc.points:
        blocks.append(Paragraph("no knee: adding workers still paid at the largest count measured", "dim"))
    blocks.append(Paragraph(sc.criterion, "dim"))
    return Section(title, tuple(blocks))


def _notes(notes: Sequence[str]) -> Section | None:
    if not notes:
        return None
    return Section("notes", tuple(Paragraph(f"note: {note}", "warn") for note in notes))
