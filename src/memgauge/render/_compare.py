"""Text renderings of a ``Comparison`` (``memgauge compare``): terminal and Markdown.

Columns: the baseline's value, then for each other profile its value, the signed delta against the
baseline and the ratio. A missing value (see ``memgauge.analysis.compare``) reads "—".
"""

from __future__ import annotations

import io
import re
import shlex
from collections.abc import Sequence

from rich.console import Console
from rich.table import Column, Table
from rich.text import Text

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import Comparison, ComparisonRow, LineComparison
from memgauge.render._terminal import remove_column
from memgauge.render._text import text_console

MISSING = "—"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_TAIL = re.compile(r"(?:\s|\x1b\[[0-9;]*m)+$")
_LINE_WIDTH = 40  # the most a line location takes before it is cut
_MIN_SOURCE = 10  # narrower than this, the source column is left out
_PHASE_WIDTH = 32


def format_value(value: float | None, unit: str, lower_bound: bool = False) -> str:
    """A figure in its unit; "≥" after a lower bound, as in the run report."""
    if value is None:
        return MISSING
    if unit == "bytes":
        text = format_bytes(value)
    elif unit == "seconds":
        text = format_seconds(value) if value else "0 s"  # as a delta of 0 reads
    else:
        text = _count(value)
    return text + " ≥" if lower_bound else text


def format_delta(delta: float | None, unit: str) -> str:
    """A signed difference: +100 MiB, -1.20 s, +2."""
    if delta is None:
        return MISSING
    if unit == "bytes":
        return format_bytes(delta, signed=True)
    if delta == 0:
        return "0 s" if unit == "seconds" else "0"
    sign = "+" if delta > 0 else "-"
    if unit == "seconds":
        return sign + format_seconds(abs(delta))
    return sign + _count(abs(delta))


def _count(n: float) -> str:
    return str(int(n)) if float(n).is_integer() else f"{n:g}"


def format_ratio(ratio: float | None) -> str:
    return MISSING if ratio is None else f"{ratio:.2f}x"


def _pair_headlines(c: Comparison) -> list[str]:
    """For each non-baseline profile: its resident peak and wall time against the baseline's."""
    peak, wall = c.row("resident_peak"), c.row("wall")
    parts = []
    for i, name in enumerate(c.names[1:]):
        figures = []
        for label, row in (("resident peak", peak), ("wall", wall)):
            text = f"{label} {format_delta(row.deltas[i], row.unit)}"
            ratio = row.ratios[i]
            figures.append(text if ratio is None else f"{text} ({format_ratio(ratio)})")
        parts.append(f"{name} vs {c.baseline}: {', '.join(figures)}")
    return parts


def comparison_headline(comparison: Comparison) -> str:
    """One line: e.g. ``mlp vs linear: resident peak +100 MiB (1.20x), wall +3.10 s (1.50x)``."""
    return "; ".join(_pair_headlines(comparison))


def _rstrip(line: str) -> str:
    """``line`` without trailing blanks, keeping the colour codes among them."""
    tail = _TAIL.search(line)
    return line if tail is None else line[: tail.start()] + "".join(_ANSI.findall(tail.group()))


def _shown(row: ComparisonRow) -> bool:
    return any(v is not None for v in row.values)


def _runs_shown(row: ComparisonRow) -> bool:
    """The number of runs of a phase is only worth a row when some profile ran it more than once."""
    return any(v is not None and v != 1 for v in row.values)


class TerminalComparisonRenderer:
    def __init__(self, width: int = 100, color: bool = False) -> None:
        self.width = width
        self.color = color

    def render(self, comparison: Comparison) -> str:
        buf = io.StringIO()
        console = text_console(buf, self.width, self.color)
        c = comparison
        self._header(console, c)
        self._summary(console, c)
        self._phases(console, c)
        self._lines(console, c)
        for note in c.notes:
            console.print(Text(f"note: {note}", style="yellow"), overflow="fold")
        # rich pads every cell to its column's width: no trailing blanks in what users copy
        return "".join(_rstrip(line) + "\n" for line in buf.getvalue().splitlines())

    def _header(self, console: Console, c: Comparison) -> None:
        title = Text("memgauge compare", style="bold")
        title.append(f" · {len(c.names)} profiles, baseline {c.baseline}")
        console.print(title)
        table = self._table(header=False)
        table.add_column("name", no_wrap=True)
        table.add_column("exit", no_wrap=True)
        table.add_column("command", no_wrap=True, overflow="ellipsis")
        for name, ex, command in zip(c.names, c.exit, c.commands, strict=True):
            style = "green" if ex == "exit 0" else ("" if ex == "in-process" else "bold red")
            table.add_row(Text("  " + name, style="bold"), Text(ex, style=style), Text(shlex.join(command)))
        console.print(self._fit(table, flexible=table.columns[-1]))
        for line in _pair_headlines(c):
            console.print(Text(line, style="bold"), overflow="fold")

    def _table(self, title: str | None = None, header: bool = True) -> Table:
        return Table(
            title=title,
            min_width=min(len(title), self.width) if title else None,  # a title is never wrapped
            title_justify="left",
            box=None,
            pad_edge=False,
            header_style="bold",
            show_header=header,
        )

    def _figure_columns(self, table: Table, c: Comparison) -> list[Column]:
        """The baseline's column, then each other profile's value, delta and ratio. Returns the
        columns a narrow terminal can do without: the ratios, then the deltas (the headlines
        above the tables give each pair's peak and wall time)."""
        # Text: a name (a file name by default) is not rich markup
        table.add_column(Text(c.names[0]), justify="right", no_wrap=True)
        ratios: list[Column] = []
        deltas: list[Column] = []
        for name in c.names[1:]:
            table.add_column(Text(name), justify="right", no_wrap=True)
            table.add_column("Δ", justify="right", no_wrap=True)
            deltas.append(table.columns[-1])
            table.add_column("ratio", justify="right", no_wrap=True)
            ratios.append(table.columns[-1])
        return ratios + deltas

    def _figures(self, row: ComparisonRow) -> list[Text]:
        cells = [Text(format_value(row.values[0], row.unit, row.is_lower_bound(0)))]
        for i, (delta, ratio) in enumerate(zip(row.deltas, row.ratios, strict=True), start=1):
            style = ""
            if row.unit != "count" and delta is not None and delta != 0:
                style = "red" if delta > 0 else "green"  # more memory or time is the worse way
            cells += [
                Text(format_value(row.values[i], row.unit, row.is_lower_bound(i))),
                Text(format_delta(delta, row.unit), style=style),
                Text(format_ratio(ratio), style=style),
            ]
        return cells

    def _fit(
        self,
        table: Table,
        *,
        flexible: Column | None = None,
        names: tuple[Column, int] | None = None,
        optional: Sequence[Column] = (),
    ) -> Table:
        """Every column as wide as its content, the ``names`` column (lines, phases) at most its
        given width; the ``flexible`` column gets the rest of the width and is cut, or left out
        below ``_MIN_SOURCE``. Too wide, the names are cut first, then the ``optional`` columns
        go, in order; the figures are cut only if that is not enough. Columns are told apart by
        identity, never by header: a profile may be named "source" or "line"."""
        widths: list[tuple[Column, int]] = []
        for column in table.columns:
            if column is flexible:
                continue
            header = [len(str(column.header))] if table.show_header else []
            width = max([*header, *(len(str(c)) for c in column.cells)])
            if names is not None and column is names[0]:
                width = min(width, names[1])
            widths.append((column, width))
        used = sum(w for _, w in widths) + 2 * len(widths)  # two blanks between columns
        for k, (column, width) in enumerate(widths):
            overflow = used - 2 - self.width
            if overflow > 0 and names is not None and column is names[0]:
                cut = max(0, min(overflow, width - _MIN_SOURCE))
                widths[k] = (column, width - cut)
                used -= cut
        # whole columns rather than every figure cut to "409…" (or one rich drops unasked)
        for column in optional:
            if used - 2 <= self.width:
                break
            for k, (kept, width) in enumerate(widths):
                if kept is column:
                    del widths[k]
                    used -= width + 2
                    remove_column(table, column)
                    break
        fits = used - 2 <= self.width
        for column, width in widths:
            column.max_width = width
            # a fixed width rich cannot reduce: it would cut the last columns off instead
            column.min_width = width if fits else None
        if flexible is not None:
            rest = self.width - used
            if rest < _MIN_SOURCE:
                remove_column(table, flexible)
            else:
                flexible.max_width = rest
        return table

    def _summary(self, console: Console, c: Comparison) -> None:
        table = self._table()
        table.add_column("", no_wrap=True)
        optional = self._figure_columns(table, c)
        for row in c.summary:
            if _shown(row):
                table.add_row(Text(row.label), *self._figures(row))
        console.print(self._fit(table, optional=optional))

    def _phases(self, console: Console, c: Comparison) -> None:
        if not c.phases:
            return
        table = self._table("phases (highest peak, total time of all their runs)")
        table.add_column("phase", no_wrap=True, overflow="ellipsis")
        names = table.columns[-1]
        table.add_column("", no_wrap=True)
        optional = self._figure_columns(table, c)
        for ph in c.phases:
            name = "  " * ph.depth + ph.name
            table.add_row(Text(name), Text(ph.peak.label), *self._figures(ph.peak))
            table.add_row(Text(""), Text(ph.duration.label), *self._figures(ph.duration))
            if _runs_shown(ph.count):
                table.add_row(Text(""), Text(ph.count.label), *self._figures(ph.count))
        console.print(self._fit(table, names=(names, _PHASE_WIDTH), optional=optional))

    def _lines(self, console: Console, c: Comparison) -> None:
        if not c.lines:
            return
        table = self._table("resident peak held by (sampled)")
        optional = self._figure_columns(table, c)
        table.add_column("line", no_wrap=True, overflow="ellipsis")
        table.add_column("source", no_wrap=True, overflow="ellipsis")
        location, source = table.columns[-2:]
        for line in c.lines:
            # Text: no markup in source
            table.add_row(*self._figures(line.held), Text(line.location), Text(line.source, style="dim"))
        console.print(self._fit(table, flexible=source, names=(location, _LINE_WIDTH), optional=optional))


# characters that start inline markup (emphasis, links, HTML, entities, strikethrough)
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&])")
_MAX_SOURCE = 120  # a minified or generated line would make a row thousands of characters wide


def _one_line(text: str) -> str:
    # a newline would end a table row
    return " ".join(text.splitlines())


def _md_text(text: str) -> str:
    """Text in a GFM table cell: Markdown punctuation escaped, so a name shows as written."""
    return _MD_SPECIAL.sub(r"\\\1", _one_line(text))


def _md_code(text: str) -> str:
    """A code span holding ``text``: its fence is longer than any run of backticks in it, and ``|``
    is escaped, which GFM honours in a table cell even inside a code span."""
    text = _one_line(text).replace("|", "\\|")
    if not text:
        return ""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    # GFM strips one space from each side when both are there, and a fence must not touch a backtick
    pad = " " if text[0] in "` " or text[-1] in "` " else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _md_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


class MarkdownComparisonRenderer:
    def render(self, comparison: Comparison) -> str:
        c = comparison
        out = [f"## memgauge compare: {_md_text(', '.join(c.names))}", ""]
        out += [_md_text(line) + "  " for line in _pair_headlines(c)]
        out[-1] = out[-1].rstrip()
        out += ["", _md_row(["profile", "exit", "command"]), _md_row(["---"] * 3)]
        for i, (name, ex, command) in enumerate(zip(c.names, c.exit, c.commands, strict=True)):
            label = _md_text(name) + (" (baseline)" if i == 0 else "")
            out.append(_md_row([label, _md_text(ex), _md_code(shlex.join(command))]))

        out += [
            "",
            "### Summary",
            "",
            *self._table(c, [""], [([r.label], r) for r in c.summary if _shown(r)]),
        ]

        if c.phases:
            rows: list[tuple[list[str], ComparisonRow]] = []
            for ph in c.phases:
                # the indentation of nested phases, kept visible in a table cell
                name = "\u00a0\u00a0" * ph.depth + _md_text(ph.name)
                rows.append(([name, ph.peak.label], ph.peak))
                rows.append((["", ph.duration.label], ph.duration))
                if _runs_shown(ph.count):
                    rows.append((["", ph.count.label], ph.count))
            out += ["", "### Phases", "", "Highest peak and total time of all the runs of each phase.", ""]
            out += self._table(c, ["phase", ""], rows)

        if c.lines:
            out += ["", "### Resident peak held by (sampled)", ""]
            out += self._table(
                c, ["line", "source"], [(self._line_cells(line), line.held) for line in c.lines]
            )

        if c.notes:
            out.append("")
            out += [f"> note: {_md_text(note)}  " for note in c.notes]
            out[-1] = out[-1].rstrip()
        return "\n".join(out) + "\n"

    def _line_cells(self, line: LineComparison) -> list[str]:
        source = line.source if len(line.source) <= _MAX_SOURCE else line.source[: _MAX_SOURCE - 1] + "…"
        return [_md_code(line.location), _md_code(source)]

    def _table(
        self, c: Comparison, heads: list[str], rows: list[tuple[list[str], ComparisonRow]]
    ) -> list[str]:
        """``heads`` name the leading text columns, the figures of each row follow its texts."""
        figure_heads = [_md_text(c.names[0])]
        for name in c.names[1:]:
            figure_heads += [_md_text(name), f"Δ {_md_text(name)}", f"ratio {_md_text(name)}"]
        lines = [
            _md_row(heads + figure_heads),
            _md_row(["---"] * len(heads) + ["---:"] * len(figure_heads)),
        ]
        for texts, row in rows:
            figures = [format_value(row.values[0], row.unit, row.is_lower_bound(0))]
            for i, (delta, ratio) in enumerate(zip(row.deltas, row.ratios, strict=True), start=1):
                figures += [
                    format_value(row.values[i], row.unit, row.is_lower_bound(i)),
                    format_delta(delta, row.unit),
                    format_ratio(ratio),
                ]
            lines.append(_md_row(texts + figures))
        return lines
