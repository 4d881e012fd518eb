"""Text renderings of a ``Comparison`` (``memgauge compare``): terminal and Markdown.

Columns: the baseline's value, then for each other profile its value, the signed delta against the
baseline and the ratio. A missing value (see ``memgauge.analysis.compare``) reads "—".
"""

from __future__ import annotations

import io
import shlex

from rich.console import Console
from rich.table import Column
from rich.text import Text

from memgauge.analysis import Comparison, ComparisonRow, LineComparison, has_values, ran_repeatedly
from memgauge.render._format import (
    clip,
    format_delta,
    format_figure,
    format_ratio,
    md_code,
    md_row,
    md_text,
)
from memgauge.render._layout import Layout, console, without_trailing_blanks
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


def _figures(row: ComparisonRow) -> list[str]:
    """The baseline's figure, then each other profile's figure, delta and ratio."""
    cells = [format_figure(row.values[0], row.unit, row.is_lower_bound(0))]
    for i, (delta, ratio) in enumerate(zip(row.deltas, row.ratios, strict=True), start=1):
        cells += [
            format_figure(row.values[i], row.unit, row.is_lower_bound(i)),
            format_delta(delta, row.unit),
            format_ratio(ratio),
        ]
    return cells


def _figure_columns(layout: Layout, c: Comparison) -> list[Column]:
    """The baseline's column, then each other profile's value, delta and ratio. Returns the
    columns a narrow terminal can do without: the ratios, then the deltas (the headlines above
    the tables give each pair's peak and wall time). Columns are told apart by identity, never by
    header: a profile may be named "source" or "line"."""
    # Text: a name (a file name by default) is not rich markup
    layout.figure(Text(c.names[0]))
    ratios: list[Column] = []
    deltas: list[Column] = []
    for name in c.names[1:]:
        layout.figure(Text(name))
        deltas.append(layout.figure("Δ"))
        ratios.append(layout.figure("ratio"))
    return ratios + deltas


def _cells(row: ComparisonRow) -> list[Text]:
    figures = _figures(row)
    cells = [Text(figures[0])]
    for i, delta in enumerate(row.deltas):
        style = ""
        if row.unit != "count" and delta is not None and delta != 0:
            style = "red" if delta > 0 else "green"  # more memory or time is the worse way
        value, change, ratio = figures[1 + 3 * i : 4 + 3 * i]
        cells += [Text(value), Text(change, style=style), Text(ratio, style=style)]
    return cells


def compare_rows_terminal(
    out: Console, c: Comparison, title: str, head: str, rows: list[tuple[str, ComparisonRow]], width: int
) -> None:
    """A section's figure rows in the comparison's terminal table: ``head`` names the label
    column, each row's figures follow (baseline, then each profile's value, delta and ratio)."""
    layout = Layout(width, title, cut_figures=True)
    layout.figure(head, justify="left")
    optional = _figure_columns(layout, c)
    for label, row in rows:
        layout.add_row(Text(label), *_cells(row))
    out.print(layout.fit(optional))


def compare_rows_markdown(
    c: Comparison, heads: list[str], rows: list[tuple[list[str], ComparisonRow]]
) -> list[str]:
    """``heads`` name the leading text columns, the figures of each row follow its texts."""
    figure_heads = [md_text(c.names[0])]
    for name in c.names[1:]:
        figure_heads += [md_text(name), f"Δ {md_text(name)}", f"ratio {md_text(name)}"]
    lines = [
        md_row(heads + figure_heads),
        md_row(["---"] * len(heads) + ["---:"] * len(figure_heads)),
    ]
    lines += [md_row(texts + _figures(row)) for texts, row in rows]
    return lines


class TerminalComparisonRenderer:
    def __init__(self, width: int = 100, color: bool = False) -> None:
        self.width = width
        self.color = color

    def render(self, comparison: Comparison) -> str:
        buf = io.StringIO()
        out = console(buf, self.width, self.color)
        c = comparison
        self._header(out, c)
        self._summary(out, c)
        self._phases(out, c)
        for name, part in c.sections.items():
            section(name).part("compare_report").terminal(out, c, part, self.width)
        self._lines(out, c)
        for note in c.notes:
            out.print(Text(f"note: {note}", style="yellow"), overflow="fold")
        return without_trailing_blanks(buf.getvalue())

    def _header(self, out: Console, c: Comparison) -> None:
        title = Text("memgauge compare", style="bold")
        title.append(f" · {len(c.names)} profiles, baseline {c.baseline}")
        out.print(title)
        layout = Layout(self.width, header=False, cut_figures=True)
        layout.figure("name", justify="left")
        layout.figure("exit", justify="left")
        layout.rest("command", least=_MIN_CUT)
        for name, ex, command in zip(c.names, c.exit, c.commands, strict=True):
            style = "green" if ex == "exit 0" else ("" if ex == "in-process" else "bold red")
            layout.add_row(Text("  " + name, style="bold"), Text(ex, style=style), Text(shlex.join(command)))
        out.print(layout.fit())
        for line in _pair_headlines(c):
            out.print(Text(line, style="bold"), overflow="fold")

    def _figure_columns(self, layout: Layout, c: Comparison) -> list[Column]:
        return _figure_columns(layout, c)

    def _cells(self, row: ComparisonRow) -> list[Text]:
        return _cells(row)

    def _summary(self, out: Console, c: Comparison) -> None:
        layout = Layout(self.width, cut_figures=True)
        layout.figure("", justify="left")
        optional = self._figure_columns(layout, c)
        for row in c.summary:
            if has_values(row):
                layout.add_row(Text(row.label), *self._cells(row))
        out.print(layout.fit(optional))

    def _phases(self, out: Console, c: Comparison) -> None:
        if not c.phases:
            return
        layout = Layout(self.width, "phases (highest peak, total time of all their runs)", cut_figures=True)
        layout.name("phase", most=_PHASE_WIDTH, least=_MIN_CUT)
        layout.figure("", justify="left")
        optional = self._figure_columns(layout, c)
        for ph in c.phases:
            name = "  " * ph.depth + ph.name
            layout.add_row(Text(name), Text(ph.peak.label), *self._cells(ph.peak))
            layout.add_row(Text(""), Text(ph.duration.label), *self._cells(ph.duration))
            if ran_repeatedly(ph.count):
                layout.add_row(Text(""), Text(ph.count.label), *self._cells(ph.count))
        out.print(layout.fit(optional))

    def _lines(self, out: Console, c: Comparison) -> None:
        if not c.lines:
            return
        layout = Layout(self.width, HELD_TITLE, cut_figures=True)
        optional = self._figure_columns(layout, c)
        layout.name("line", most=_LINE_WIDTH, least=_MIN_CUT)
        layout.rest("source", least=_MIN_CUT)
        for line in c.lines:
            # Text: no markup in source
            layout.add_row(*self._cells(line.held), Text(line.location), Text(line.source, style="dim"))
        out.print(layout.fit(optional))


class MarkdownComparisonRenderer:
    def render(self, comparison: Comparison) -> str:
        c = comparison
        out = [f"## memgauge compare: {md_text(', '.join(c.names))}", ""]
        out += [md_text(line) + "  " for line in _pair_headlines(c)]
        out[-1] = out[-1].rstrip()
        out += ["", md_row(["profile", "exit", "command"]), md_row(["---"] * 3)]
        for i, (name, ex, command) in enumerate(zip(c.names, c.exit, c.commands, strict=True)):
            label = md_text(name) + (" (baseline)" if i == 0 else "")
            out.append(md_row([label, md_text(ex), md_code(shlex.join(command))]))

        out += [
            "",
            "### Summary",
            "",
            *self._table(c, [""], [([r.label], r) for r in c.summary if has_values(r)]),
        ]

        if c.phases:
            rows: list[tuple[list[str], ComparisonRow]] = []
            for ph in c.phases:
                # the indentation of nested phases, kept visible in a table cell
                name = "\u00a0\u00a0" * ph.depth + md_text(ph.name)
                rows.append(([name, ph.peak.label], ph.peak))
                rows.append((["", ph.duration.label], ph.duration))
                if ran_repeatedly(ph.count):
                    rows.append((["", ph.count.label], ph.count))
            out += ["", "### Phases", "", "Highest peak and total time of all the runs of each phase.", ""]
            out += self._table(c, ["phase", ""], rows)

        for name, part in c.sections.items():
            out += section(name).part("compare_report").markdown(c, part)

        if c.lines:
            out += ["", "### Resident peak held by (sampled)", ""]
            out += self._table(
                c, ["line", "source"], [(self._line_cells(line), line.held) for line in c.lines]
            )

        if c.notes:
            out.append("")
            out += [f"> note: {md_text(note)}  " for note in c.notes]
            out[-1] = out[-1].rstrip()
        return "\n".join(out) + "\n"

    def _line_cells(self, line: LineComparison) -> list[str]:
        return [md_code(line.location), md_code(clip(line.source))]

    def _table(
        self, c: Comparison, heads: list[str], rows: list[tuple[list[str], ComparisonRow]]
    ) -> list[str]:
        return compare_rows_markdown(c, heads, rows)
