"""The report of ``memgauge sweep`` as report document sections, built once: the header, the
points, the phases, the fits (``_sweep_document_fits``), the phases' shares of the wall time, the
worker scaling and the notes, in report order. The terminal and Markdown render them with the
document's backends, and the page (``_html_sweep``) with its own, in its own order.

Each table's title is a ``Heading`` of its own, not the table's: on the terminal a table as wide
as its title would spread short figures apart, and a title as narrow as its table would wrap.
Figures are never cut (a narrow terminal leaves out a table's optional columns, least useful
first); only text (metric names, reasons) wraps, between words.

The page has the same rows, sortable, and some of its own: its sections' headings and notes where
the text reports have titles, summary cards where they have a line, the charts, and columns of
its own (a phase's peak and time apart, where the text reports say them in one cell). Those are
the page's alone (``page_only``, ``page_column``), as the text reports' own are theirs.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from typing import Any

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
from memgauge.render._document import (
    Block,
    Card,
    Cards,
    Column,
    Heading,
    Items,
    Line,
    Named,
    Paragraph,
    Section,
    Span,
    TableCell,
)
from memgauge.render._format import DASH, MISSING, format_number, percent
from memgauge.render._sweep_charts import KINDS, MAX_CHARTS, chart_grid, charts
from memgauge.render._sweep_document_fits import (
    Cells,
    budget_section,
    figure,
    laws_section,
    more,
    page_column,
    page_only,
    param_key,
    predictions_section,
    text_column,
    text_only,
    toned_table,
)
from memgauge.render._sweep_words import KNEE_NOTE, fixed_text, format_metric, format_range, format_value

MAX_ROWS = 200  # a table's rows: more are counted, not shown
_FAILURES = 5  # the failed runs whose last line is quoted under the points
_NO_KNEE = "no knee: adding workers still paid at the largest count measured"


def sweep_document(
    a: SweepAnalysis, max_rows: int = MAX_ROWS, max_charts: int = MAX_CHARTS
) -> dict[str, Section]:
    """The report's sections with something to say, by their anchors on the page, in report
    order; at most ``max_rows`` rows a table and ``max_charts`` charts."""
    r = a.result
    drawn: dict[str, list[dict[str, Any]]] = {kind: [] for kind in KINDS}
    for chart in charts(a, max_charts):
        drawn[chart["kind"]].append(chart)
    builds: dict[str, Callable[[], Section | None]] = {
        "summary": lambda: _header(r),
        "points": lambda: _points(r, max_rows),
        "phases": lambda: _phases(r, max_rows),
        "growth": lambda: laws_section(a.laws, drawn["growth"], max_rows),
        "predictions": lambda: predictions_section(a.predictions, max_rows),
        "budget": lambda: budget_section(a, max_rows),
        "shares": lambda: _shares(a.shares, drawn["shares"], max_rows),
        "scaling": lambda: _scaling(a.scaling, drawn["scaling"], max_rows),
        "notes": lambda: _notes(a.notes),
    }
    return {id: s for id, build in builds.items() if (s := build()) is not None}


def sweep_sections(a: SweepAnalysis, max_rows: int = MAX_ROWS) -> list[Section]:
    """The report's sections with something to say, in report order."""
    return list(sweep_document(a, max_rows).values())


def _header(r: SweepResult) -> Section:
    """The command and how the sweep went: a line of the text reports, the page's cards."""
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
    params = tuple((name, ", ".join(format_value(x) for x in values)) for name, values in r.params.items())
    return Section("", (text_only(*blocks), page_only(_cards(r), Named(params))))


def _cards(r: SweepResult) -> Cards:
    measured, total = points_measured(r)
    # every run, the confirming ones too: the law table's "runs" counts them as well
    every = [run for p in r.points for run in p.runs] + [c.run for c in r.confirmations]
    failed = sum(1 for run in every if not run.ok)
    confirming = f" ({len(r.confirmations)} confirming)" if r.confirmations else ""
    runs = (f"{failed} failed" if failed else "all ok") + confirming
    ended = "complete" if r.complete else "interrupted"
    return Cards(
        (
            Card("points", f"{measured} of {total}", ended, "good" if r.complete else "bad"),
            Card("runs", str(len(every)), runs, "bad" if failed else "good"),
            Card("repeat", str(r.repeat), "runs per point"),
            Card("engine", r.engine, f"{r.concurrency} at a time" if r.concurrency else ""),
        )
    )


def _param_columns(r: SweepResult) -> tuple[list[str], list[Column]]:
    """The parameters a table's rows are told apart by, and their columns: a number's is a
    figure, a name's words."""
    varied = r.varied() or list(r.params)
    return varied, [Column(n, "figure" if is_numeric(r.params[n]) else "words") for n in varied]


def _param_cells(p: Point, names: list[str]) -> Cells:
    return [
        TableCell(format_value(p.params[n]), sort=param_key(p.params[n]))
        if n in p.params
        else figure("—", None)
        for n in names
    ]


def _median(p: Point, metric: str) -> TableCell:
    """A point's median, sorted on the page by it: a measured figure as a float, a program's own
    metric as it recorded it."""
    value = p.median(metric)
    key = value if value is None or metric.startswith("metric:") else float(value)
    return figure(format_metric(metric, value), key)


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
        cells.append(_median(p, "rss"))
        if spread:
            values = p.values("rss")
            text = format_range("rss", min(values), max(values)) if len(values) > 1 else ""
            cells.append(figure(text, min(values) if values else None))
        cells += [_median(p, "wall"), _median(p, "cpu")]
        summary = exit_summary(p, r.repeat)
        cells.append(TableCell(summary, "ok" if summary.startswith("ok") else "bad"))
        cells += [_median(p, f"metric:{m}") for m in metrics]
        rows.append(cells)
    optional = (*(c.header for c in spread), "CPU", *metrics[::-1])
    runs = f", medians of {r.repeat} runs" if r.repeat > 1 else ""
    title = f"points ({len(r.points)}{runs})"
    table = toned_table(columns, rows, optional)
    blocks = [Heading(title), table, *more(len(shown), len(r.points)), text_only(*_failures(r))]
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
    shown = min(len(failed), _FAILURES)
    if len(failed) > shown:
        blocks.append(Paragraph(f"  … {len(failed) - shown} more rows not shown", "dim"))
    return blocks


def _phase_cells(p: Point, name: str) -> Cells:
    """A phase's median peak and time: one cell of the text reports', two of the page's."""
    peak, seconds = p.median(f"phase:{name}.peak"), p.median(f"phase:{name}.seconds")
    both = MISSING if peak is None or seconds is None else f"{format_bytes(peak)} / {format_seconds(seconds)}"
    return [TableCell(both), _median(p, f"phase:{name}.peak"), _median(p, f"phase:{name}.seconds")]


def _phases(r: SweepResult, most: int) -> Section | None:
    names = top_phases(r)
    if not names:
        return None
    varied, columns = _param_columns(r)
    phases = [text_column(Column(f"{name} peak / time", short=name)) for name in names]
    for name, both in zip(names, phases, strict=True):
        columns += [both, page_column(Column(f"{name} peak")), page_column(Column(f"{name} time"))]
    shown = r.points[:most]
    rows = [_param_cells(p, varied) + [c for n in names for c in _phase_cells(p, n)] for p in shown]
    optional = tuple(c.header for c in phases[:0:-1])
    table = toned_table(columns, rows, optional, left_out="left out to fit the width")
    title = "phases (medians: peak / time)"
    note = "The outermost phases of each point: medians of their peaks and of their times."
    return Section("phases", (text_only(Heading(title)), table, *more(len(shown), len(r.points))), note)


def _shares(shares: Sequence[PhaseShares], drawn: list[dict[str, Any]], most: int) -> Section | None:
    if not shares:
        return None
    blocks: list[Block] = [page_only(chart_grid(drawn))]
    for s in shares:
        where = f" ({fixed_text(s.fixed)})" if s.fixed else ""
        columns = [Column(s.param), *(Column(name) for name in s.phases), Column("other")]
        every = share_rows(s)
        rows: list[Cells] = [
            [
                TableCell(format_value(x), sort=param_key(x)),
                *(TableCell(percent(v), sort=v) for v in row),
                TableCell(percent(other), sort=other),
            ]
            for x, row, other in every[:most]
        ]
        text = Heading(f"share of wall time by phase, vs {s.param}{where}")
        blocks += [text_only(text), page_only(Heading(f"by {s.param}{where}"))]
        blocks += [toned_table(columns, rows, tuple(s.phases[:0:-1])), *more(len(rows), len(every))]
    note = "Each outermost phase's median time as a share of the median wall time; other: time in no phase."
    return Section("share of wall time by phase", tuple(blocks), note)


def _scaling(scaling: Sequence[ScalingRow], drawn: list[dict[str, Any]], most: int) -> Section | None:
    if not scaling:
        return None
    blocks: list[Block] = [page_only(chart_grid(drawn))]
    for row in scaling:
        sc = row.scaling
        where = f" ({fixed_text(row.fixed)})" if row.fixed else ""
        columns = [Column(row.param), Column("throughput"), Column("speedup"), Column("efficiency")]
        columns.append(Column("", "words"))
        rows: list[Cells] = []
        for p in sc.points[:most]:
            knee = sc.knee is not None and p.workers == sc.knee
            rows.append(
                [
                    TableCell(format_number(p.workers), "strong" if knee else "", p.workers),
                    TableCell(format_metric(f"throughput:{row.metric}", p.throughput), sort=p.throughput),
                    TableCell(f"{p.speedup:.2f}x", sort=p.speedup),
                    TableCell(percent(p.efficiency), sort=p.efficiency),
                    TableCell(KNEE_NOTE, "warn", "knee") if knee else TableCell(""),
                ]
            )
        title = f"worker scaling: {row.metric} per second vs {row.param}{where}"
        on_page = f"{row.metric} per second by {row.param}{where}"
        blocks += [text_only(Heading(title)), page_only(Heading(on_page))]
        blocks += [toned_table(columns, rows, ("efficiency",)), *more(len(rows), len(sc.points))]
        no_knee = [Paragraph(_NO_KNEE, "dim")] if sc.knee is None and sc.points else []
        blocks.append(text_only(*no_knee, Paragraph(sc.criterion, "dim")))
    criteria = " ".join(dict.fromkeys(row.scaling.criterion for row in scaling))
    return Section("worker scaling", tuple(blocks), criteria)


def _notes(notes: Sequence[str]) -> Section | None:
    if not notes:
        return None
    said = text_only(*(Paragraph(f"note: {note}", "warn") for note in notes))
    return Section("notes", (said, page_only(Items(tuple(notes)))))
