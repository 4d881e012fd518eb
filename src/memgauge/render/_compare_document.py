"""The comparison (``memgauge compare``), built once on the report document: its header (the runs,
how each ended and its command, each pair's headline), the summary figures, the phases, each
section's part (its "compare_report"), the lines holding the resident peak and the notes. Every
format renders these sections (``_compare``, ``_html_compare``); the page has a header of its own
and the runs in its summary.

A figure row is the baseline's figure, then each other run's with its delta and ratio against the
baseline; a missing value (see ``memgauge.analysis.compare``) reads "—".
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from memgauge.analysis import Comparison, ComparisonRow, has_values, ran_repeatedly
from memgauge.render._document import (
    Breaks,
    Change,
    Chart,
    Column,
    Compared,
    Heading,
    Line,
    Only,
    Paragraph,
    Runs,
    Section,
    Span,
    SpanTone,
)
from memgauge.render._format import MAX_SOURCE, format_delta, format_figure, format_ratio
from memgauge.render._text import HELD_TITLE
from memgauge.sections import section

_LINE_WIDTH = 40  # the most a line location takes before it is cut
_PHASE_WIDTH = 32
_MIN_CUT = 10  # a name is cut no shorter than this; the source is left out instead


def _pair_headlines(c: Comparison) -> list[str]:
    """For each non-baseline profile: its memory headline (what a container needs, else the
    resident peak) and wall time against the baseline's."""
    memory, wall = c.headline_row, c.row("wall")
    parts = []
    for i, name in enumerate(c.names[1:]):
        figures = []
        for label, row in ((memory.label, memory), ("wall", wall)):
            text = f"{label} {format_delta(row.deltas[i], row.unit)}"
            ratio = row.ratios[i]
            figures.append(text if ratio is None else f"{text} ({format_ratio(ratio)})")
        parts.append(f"{name} vs {c.baseline}: {', '.join(figures)}")
    return parts


def comparison_headline(comparison: Comparison) -> str:
    """One line: e.g. ``mlp vs linear: resident peak +100 MiB (1.20x), wall +3.10 s (1.50x)``."""
    return "; ".join(_pair_headlines(comparison))


def changes(row: ComparisonRow) -> tuple[Change, ...]:
    """The baseline's figure, then each other profile's with its delta and ratio; more memory or
    time is the worse way, a count neither."""
    cells = [Change(format_figure(row.values[0], row.unit, row.is_lower_bound(0)), sort=row.values[0])]
    for i, (delta, ratio) in enumerate(zip(row.deltas, row.ratios, strict=True), start=1):
        worse = None if delta is None or delta == 0 or row.unit == "count" else delta > 0
        shown = format_figure(row.values[i], row.unit, row.is_lower_bound(i))
        cells.append(
            Change(
                shown,
                None if delta is None else format_delta(delta, row.unit),
                None if ratio is None else format_ratio(ratio),
                "" if worse is None else "bad" if worse else "good",
                row.values[i],
            )
        )
    return tuple(cells)


def compared_rows(
    c: Comparison, title: str, head: str, rows: Sequence[tuple[str, ComparisonRow]]
) -> Compared:
    """A section's figure rows, each under its label (the column ``head``), as the comparison's
    figure tables have them."""
    return Compared(title, (Column(head, "label"),), c.names, tuple(((lb,), changes(r)) for lb, r in rows))


def _header(c: Comparison) -> Section:
    headlines = tuple(_pair_headlines(c))
    title = (Span(f"memgauge compare · {len(c.names)} profiles, baseline {c.baseline}", "strong"),)
    return Section(
        "",
        (
            Only(("terminal",), (Line((title,)),)),
            Only(
                ("markdown",),
                (Heading(f"memgauge compare: {', '.join(c.names)}", level=2), Breaks(headlines)),
            ),
            _runs(c),
            Only(("terminal",), (Breaks(headlines, "strong"),)),
        ),
    )


def _runs(c: Comparison) -> Runs:
    def tone(ended: str) -> SpanTone:
        return "good" if ended == "exit 0" else "" if ended == "in-process" else "bad"

    return Runs(c.names, tuple((e, tone(e)) for e in c.exit), tuple(shlex.join(cmd) for cmd in c.commands))


def _summary(c: Comparison) -> Section:
    rows = [(r.label, r) for r in c.summary if has_values(r)]
    return Section(
        " vs ".join(c.names),
        (
            Only(("html",), (_runs(c),)),
            Only(("markdown",), (Heading("Summary", level=3),)),
            compared_rows(c, "", "", rows),
            Chart("chart-compare-peaks"),
            Chart("chart-compare-times"),
        ),
        f"Deltas and ratios are against the first profile, {c.baseline}.",
    )


def _phases(c: Comparison) -> Section | None:
    if not c.phases:
        return None
    rows: list[tuple[tuple[str, ...], tuple[Change, ...]]] = []
    labels: list[tuple[str, str]] = []
    depths: list[int] = []
    for ph in c.phases:
        shown = [(ph.peak, "peak"), (ph.duration, "time")]
        if ran_repeatedly(ph.count):
            shown.append((ph.count, "count"))
        for i, (row, page_label) in enumerate(shown):
            rows.append(((ph.name if i == 0 else "", row.label), changes(row)))
            labels.append((f"{ph.name} {page_label}", ph.name))
            depths.append(ph.depth)
    columns = (Column("phase", "name", most=_PHASE_WIDTH, least=_MIN_CUT), Column("", "label"))
    title = "phases (highest peak, total time of all their runs)"
    table = Compared(title, columns, c.names, tuple(rows), depths=tuple(depths), labels=tuple(labels))
    about = "Highest peak and total time of all the runs of each phase."
    return Section(
        "phases",
        (
            Only(("markdown",), (Heading("Phases", level=3), Paragraph(about))),
            Chart("chart-compare-phases"),
            Chart("chart-compare-phase-times"),
            table,
        ),
        "Phases matched by name; a name opened several times shows its highest peak and its total time.",
    )


def _lines(c: Comparison) -> Section | None:
    if not c.lines:
        return None
    columns = (
        Column("line", "name", most=_LINE_WIDTH, least=_MIN_CUT, code=True),
        Column("source", "rest", least=_MIN_CUT, code=True, dim=True, clip=MAX_SOURCE),
    )
    rows = tuple(((ln.location, ln.source), changes(ln.held)) for ln in c.lines)
    return Section(
        "lines holding the resident peak",
        (
            Only(("markdown",), (Heading("Resident peak held by (sampled)", level=3),)),
            Compared(HELD_TITLE, columns, c.names, rows, figures_first=True),
        ),
        "Matched by file, function and source text, so a line that moved still matches. "
        "— : not among the lines recorded as holding that profile's peak.",
    )


def _notes(c: Comparison) -> Section | None:
    return Section("notes", (Breaks(c.notes, "warn", "note: ", quote=True),)) if c.notes else None


def _parts(c: Comparison) -> list[tuple[str, Section]]:
    """Each section's part, by its "compare_report", in the comparison's order."""
    out = []
    for name, part in c.sections.items():
        built = section(name).part("compare_report").section(c, part)
        if built is not None:
            out.append((name, built))
    return out


def comparison_sections(c: Comparison) -> list[tuple[str, Section]]:
    """The comparison's sections after its header, each with its anchor on the page."""
    sections = [("summary", _summary(c)), ("phases", _phases(c)), *_parts(c), ("lines", _lines(c))]
    return [(id, s) for id, s in [*sections, ("notes", _notes(c))] if s is not None]


def comparison_document(c: Comparison) -> list[Section]:
    """Every section of the text reports, in order: the header, then the rest."""
    return [_header(c), *(s for _, s in comparison_sections(c))]
