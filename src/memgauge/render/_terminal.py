"""The short report ``memgauge run`` prints on stderr."""

from __future__ import annotations

import io
import shlex
from collections.abc import Sequence

from rich.console import Console
from rich.table import Column, Table
from rich.text import Text

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import (
    exit_text,
    phase_rows,
    phase_totals,
    short_path,
    sparkline,
    top_lines,
    top_processes,
)
from memgauge.model import UNBOUNDED_NOTE, Profile
from memgauge.render._text import CPU_FIGURES, cpu_rows, text_console


def _exit_text(profile: Profile) -> Text:
    words, tone = exit_text(profile)
    return Text(words, style={"good": "green", "bad": "bold red"}.get(tone, ""))


def _cut_left(where: str, width: int) -> str:
    """``path:line function`` in ``width`` characters: the path loses its start first, then the
    function goes; the line number stays."""
    head, _, function = where.partition(" ")
    path, colon, line = head.rpartition(":")
    if not colon or not line.isdigit():
        return "…" + where[len(where) - width + 1 :]
    tail = f":{line} {function}" if function else f":{line}"
    if function and width - len(tail) < 5:
        tail = f":{line}"
    if len(path) + len(tail) <= width:
        return path + tail
    room = max(1, width - len(tail) - 1)
    return "…" + path[len(path) - room :] + tail


def _wrapped(parts: Sequence[Text], width: int, indent: str = "  ") -> Text:
    """``parts`` joined by spaces on as many lines as ``width`` needs, broken only between parts,
    so that a figure keeps its unit ("657 ms", not "657" and "ms" on the next line). A part
    longer than a line is left to the console to fold."""
    out = Text()
    used = 0
    for part in parts:
        if used and used + 1 + part.cell_len > width:
            out.append("\n" + indent)
            used = len(indent)
        elif used:
            out.append(" ")
            used += 1
        out.append_text(part)
        used += part.cell_len
    return out


def _content_width(column: Column) -> int:
    return max([len(str(column.header)), *(len(str(c)) for c in column.cells)])


def remove_column(table: Table, column: Column) -> None:
    """Take ``column`` out of ``table``, rows and all (a column holds its own cells)."""
    table.columns.remove(column)
    # rich pads a column by its index (the first and last have no outer padding): renumber, or
    # it measures the columns after the removed one a character off and cuts a figure
    for i, c in enumerate(table.columns):
        c._index = i


def _drop_columns(table: Table, needed: int, width: int, optional: Sequence[str]) -> int:
    """Leave out the ``optional`` columns, in order, while ``needed`` (the table's width with
    every column at its content width) is over ``width``; returns the width still needed. rich
    would instead crop the last columns mid-figure ("+75.4 Mi", "5" for "5 ms")."""
    for header in optional:
        if needed <= width:
            break
        for column in table.columns:
            if column.header == header:
                remove_column(table, column)
                needed -= _content_width(column) + 2
                break
    return needed


class TerminalRenderer:
    def __init__(
        self,
        width: int = 100,
        color: bool = False,
        max_processes: int = 5,
        max_lines: int = 8,
        cwd: str | None = None,
        max_phases: int = 30,
    ) -> None:
        self.width = width
        self.color = color
        self.max_processes = max_processes
        self.max_lines = max_lines
        self.cwd = cwd
        self.max_phases = max_phases

    def render(self, profile: Profile) -> str:
        buf = io.StringIO()
        console = text_console(buf, self.width, self.color)
        self._header(console, profile)
        self._phases(console, profile)
        self._processes(console, profile)
        self._attribution(console, profile)
        self._allocation(console, profile)
        self._lines(console, profile)
        self._leaks(console, profile)
        self._imports(console, profile)
        for note in profile.peak.notes:
            console.print(Text(f"note: {note}", style="yellow"))
        return buf.getvalue()

    def _header(self, console: Console, p: Profile) -> None:
        cpu = p.cpu.user_seconds + p.cpu.system_seconds
        title = Text("memgauge ", style="bold")
        title.append(shlex.join(p.command), style="cyan")
        console.print(title)
        times = [
            _exit_text(p),
            Text(f"wall {format_seconds(p.wall_seconds)}"),
            Text(f"user {format_seconds(p.cpu.user_seconds)}"),
            Text(f"system {format_seconds(p.cpu.system_seconds)}"),
        ]
        if p.wall_seconds > 0:
            times.append(Text(f"CPU {cpu / p.wall_seconds:.0%} of one core"))
        for i, part in enumerate(times[:-1]):
            # the separator in no colour, not in the exit status's red
            times[i] = Text.assemble(part, " ·")
        console.print(_wrapped(times, self.width))
        peak = p.peak
        head = Text("resident peak ", style="bold")
        head.append(format_bytes(peak.resident_bytes), style="bold magenta")
        parts = [head]
        if UNBOUNDED_NOTE in peak.notes:
            parts.append(Text("(a lower bound)"))
        elif peak.error_bound_bytes:
            parts.append(Text(f"±{format_bytes(peak.error_bound_bytes)}"))
        else:
            parts.append(Text("(exact)"))
        if peak.at_seconds is not None:
            parts.append(Text(f"at {format_seconds(peak.at_seconds)}"))
        console.print(_wrapped(parts, self.width))
        # Text, not markup: the method is a string from the profile
        how = [Text(f"  by {peak.method}", style="dim")]
        if peak.includes_page_cache:
            how[-1].append(",")
            how.append(Text("page cache included", style="dim"))
        if len(p.processes) > 1 or peak.includes_page_cache:
            how[-1].append(";")
            how.append(Text(f"largest process {format_bytes(peak.largest_process_bytes)}", style="dim"))
        console.print(_wrapped(how, self.width))
        series = p.timeline.cgroup_bytes or p.timeline.tree_resident_bytes
        if series:
            tail = Text(
                f"0 to {format_bytes(max(series))} over {format_seconds(p.wall_seconds)}", style="dim"
            )
            # the sparkline takes what the figures after it leave, or the whole line above them
            room = self.width - len("memory ") - 2 - tail.cell_len
            spark = Text("memory ", style="bold")
            spark.append(
                sparkline(series, width=min(60, room if room >= 10 else self.width - 7)), style="magenta"
            )
            spark.append("  " if room >= 10 else "\n  ")
            console.print(spark + tail)

    def _phases(self, console: Console, p: Profile) -> None:
        rows = phase_rows(p)
        if not rows:
            return
        if len(rows) > self.max_phases:
            self._phase_totals(console, p, len(rows))
            return
        table = self._titled("phases")
        for name, justify in (
            ("phase", "left"),
            ("pid", "right"),
            ("start", "right"),
            ("duration", "right"),
            ("share", "right"),
            ("peak", "right"),
            ("growth", "right"),
        ):
            # figures never wrap (a "≥" alone on a line); a long phase name is cut instead
            table.add_column(name, justify=justify, no_wrap=True, overflow="ellipsis")  # type: ignore[arg-type]
        for row in rows:
            ph = row.phase
            peak = format_bytes(ph.peak_resident_bytes) + ("" if ph.peak_exact else " ≥")
            name = "  " * ph.depth + ph.name + ("" if ph.complete else " (unfinished)")
            # Text: a phase name is the program's string, not rich markup ("[/]" would raise)
            table.add_row(
                Text(name),
                str(ph.pid),
                format_seconds(ph.start_seconds),
                format_seconds(ph.duration_seconds),
                f"{row.share:.0%}",
                peak,
                format_bytes(row.growth_bytes, signed=True),
            )
        console.print(self._fit_named(table, ("start", "share", "pid", "growth")))

    def _phase_totals(self, console: Console, p: Profile, records: int) -> None:
        """A phase per batch: one row per name (as the HTML report does), the longest first when
        even the names are too many."""
        totals = phase_totals(p)
        shown = sorted(totals, key=lambda t: -t.seconds)[: self.max_phases]
        title = f"phases ({records} records, summed by name"
        title += (
            f"; the {len(shown)} of {len(totals)} names with the most time)"
            if len(shown) < len(totals)
            else ")"
        )
        table = self._titled(title)
        table.add_column("phase", no_wrap=True, overflow="ellipsis")
        for name in ("count", "total time", "share", "max peak"):
            table.add_column(name, justify="right", no_wrap=True)
        wall = p.wall_seconds or 1.0
        for t in shown:
            table.add_row(
                Text(t.name),
                str(t.count),
                format_seconds(t.seconds),
                f"{t.seconds / wall:.0%}",
                format_bytes(t.peak_bytes) + (" ≥" if t.lower_bound else ""),
            )
        console.print(self._fit_named(table, ("share", "count")))

    def _fit_named(self, table: Table, optional: Sequence[str]) -> Table:
        """The first column a name, cut to fit; every other a figure, as wide as its content.
        Where the figures and 8 characters of name do not fit, the ``optional`` figures go."""
        used = sum(_content_width(c) + 2 for c in table.columns[1:])
        used = _drop_columns(table, used + 8, self.width, optional) - 8
        for column in table.columns[1:]:
            column.min_width = _content_width(column)
        table.columns[0].max_width = max(8, self.width - used)
        return table

    def _processes(self, console: Console, p: Profile) -> None:
        if len(p.processes) <= 1:
            return
        shown = top_processes(p, self.max_processes)
        table = self._titled(f"processes ({len(shown)} of {len(p.processes)}, by peak)")
        table.add_column("pid", justify="right", no_wrap=True, min_width=7)
        table.add_column("peak", justify="right", no_wrap=True, min_width=9)
        table.add_column("cpu", justify="right", no_wrap=True, min_width=8)
        table.add_column("command", no_wrap=True, overflow="ellipsis", ratio=1)
        for proc in shown:
            table.add_row(
                str(proc.pid),
                format_bytes(proc.peak_resident_bytes),
                format_seconds(proc.cpu_user_seconds + proc.cpu_system_seconds),
                # Text: an argument is not rich markup
                Text(shlex.join(proc.cmdline) if proc.cmdline else "(unknown)"),
            )
        console.print(table)

    def _titled(self, title: str) -> Table:
        """A borderless table under a left-aligned title, never wrapped to a narrow table."""
        return Table(
            title=title,
            min_width=min(len(title), self.width),
            title_justify="left",
            box=None,
            pad_edge=False,
            header_style="bold",
        )

    def _where(self, file: str, line: int, function: str = "") -> str:
        where = f"{short_path(file, self.cwd)}:{line}" if line else file
        return f"{where} {function}" if function else where

    def _table(self, p: Profile, title: str, figures: list[str]) -> Table:
        """Figures right-aligned, then the process (when there are several), the line and its
        source; only the source is cut to fit."""
        table = self._titled(title)
        for name in figures:
            table.add_column(name, justify="right", no_wrap=True)
        if len(p.processes) > 1:
            table.add_column("pid", justify="right", no_wrap=True)
        table.add_column("line", no_wrap=True, overflow="ellipsis")
        table.add_column("source", no_wrap=True, overflow="ellipsis")
        return table

    def _row(
        self,
        table: Table,
        p: Profile,
        figures: list[str],
        pid: int,
        file: str,
        line: int,
        source: str,
        function: str = "",
    ) -> None:
        """``function`` is shown after the location: for two rows of one line (a comprehension or a
        generator expression and the function around it)."""
        cells: list[Text] = [Text(f) for f in figures]
        if len(p.processes) > 1:
            cells.append(Text(str(pid)))
        # Text: no markup in source
        cells += [Text(self._where(file, line, function)), Text(source, style="dim")]
        table.add_row(*cells)

    def _fit(self, table: Table, optional: Sequence[str] = ("pid",)) -> Table:
        """Every figure column as wide as its content; the location at most 48 characters, and
        less on a narrow terminal, cut from the left so that its file name and line number stay;
        the source gets what is left of the width and is cut. Figures are never cut: where they
        and a 12-character location do not fit, the ``optional`` columns go, in order."""
        location = next((c for c in table.columns if c.header == "line"), None)
        fixed = [c for c in table.columns if c.header not in ("source", "line")]
        # each column and the gap after it; a table without a location has no gap after its last
        used = sum(_content_width(c) + 2 for c in fixed)
        used = _drop_columns(table, used + (12 if location is not None else -2), self.width, optional)
        used -= 12 if location is not None else -2
        for column in table.columns:
            if column.header in ("source", "line"):
                continue
            column.min_width = column.max_width = _content_width(column)
        if location is not None:
            longest = max([4, *(len(str(c)) for c in location.cells)])
            room = self.width - used - 2
            if room - 14 < 16:
                # too narrow for the source too: the location matters more
                for column in [c for c in table.columns if c.header == "source"]:
                    remove_column(table, column)
                width = min(longest, 48, max(12, room))
            else:
                width = min(longest, 48, room - 14)
            for cell in location.cells:
                if isinstance(cell, Text) and len(cell.plain) > width:
                    cell.plain = _cut_left(cell.plain, width)
            location.min_width = location.max_width = width
            used += width + 2
        for column in table.columns:
            if column.header == "source":
                column.max_width = max(8, self.width - used)
        return table

    def _attribution(self, console: Console, p: Profile) -> None:
        entries = p.peak.attribution[: self.max_lines]
        if not entries:
            return
        table = self._table(p, "resident peak held by (sampled)", ["bytes"])
        for a in entries:
            self._row(table, p, [format_bytes(a.bytes)], a.pid, a.file, a.line, a.source)
        console.print(self._fit(table))

    def _allocation(self, console: Console, p: Profile) -> None:
        alloc = p.allocation_peak
        if alloc is None:
            return
        table = self._table(p, f"allocation peak {format_bytes(alloc.bytes)}, live at it (memray)", ["bytes"])
        for a in alloc.attribution[: self.max_lines]:
            self._row(table, p, [format_bytes(a.bytes)], a.pid, a.file, a.line, a.source)
        console.print(self._fit(table))
        for r in p.reconciliation:
            terms = [
                f"  {'[' + str(r.pid) + '] ' if len(p.processes) > 1 else ''}process peak "
                f"{format_bytes(r.resident_peak_bytes)}",
                f"= baseline {format_bytes(r.baseline_bytes)}",
                f"+ allocations {format_bytes(r.allocation_peak_bytes)}",
                f"- never written {format_bytes(r.untouched_bytes)}",
                f"+ other {format_bytes(r.other_bytes)}",
            ]
            # too long for one line: the next lines start under the '=', and a term (a number and
            # its unit) is never split
            indent = " " * min(len(terms[0]) + 1, 8) if len(terms[0]) + 1 > self.width // 2 else ""
            indent = indent or " " * (len(terms[0]) + 1)
            halves = [" ".join(terms[:3]), indent + " ".join(terms[3:])]
            if len(" ".join(terms)) <= self.width:
                lines = [" ".join(terms)]
            elif max(map(len, halves)) <= self.width:
                lines = halves
            else:
                lines = [terms[0]]
                for term in terms[1:]:
                    if len(lines[-1]) + 1 + len(term) <= self.width:
                        lines[-1] += " " + term
                    else:
                        lines.append(indent + term)
            console.print(Text("\n".join(lines)), overflow="fold")
            for note in r.notes:
                console.print(Text(f"    {note}", style="dim"))

    def _lines(self, console: Console, p: Profile) -> None:
        rows = cpu_rows(p, self.max_lines)
        if rows:
            table = self._table(p, "CPU time by line (sampled)", CPU_FIGURES)
            for figures, pid, file, line, source, function in rows:
                self._row(table, p, figures, pid, file, line, source, function)
            # narrow: the split of the time goes before the line does
            console.print(self._fit(table, ("python", "native", "wait", "pid")))
        waiting = top_lines(p, 3, by="wait", user_only=True)
        if waiting and waiting[0].stats.wait_seconds >= 0.05 * p.wall_seconds:
            table = self._table(p, "waiting (I/O, sleep, locks)", ["wait"])
            for row in waiting:
                s = row.stats
                self._row(table, p, [format_seconds(s.wait_seconds)], s.pid, s.file, s.line, s.source)
            console.print(self._fit(table))

    def _leaks(self, console: Console, p: Profile) -> None:
        if not p.leaks:
            return
        table = self._table(
            p, "leak suspects (retained memory still growing at the end)", ["rate", "retained"]
        )
        for leak in p.leaks[: self.max_lines]:
            figures = [
                f"{format_bytes(round(leak.rate_bytes_per_second))}/s",
                format_bytes(leak.retained_bytes),
            ]
            self._row(table, p, figures, leak.pid, leak.file, leak.line, leak.source)
        console.print(self._fit(table))

    def _imports(self, console: Console, p: Profile) -> None:
        shown = [r for r in sorted(p.imports, key=lambda r: -r.seconds) if r.seconds >= 0.01][:5]
        if not shown:
            return
        total_t = sum(r.self_seconds for r in p.imports)
        total_b = sum(r.self_resident_bytes for r in p.imports)
        title = f"imports: {format_seconds(total_t)}, {format_bytes(total_b, signed=True)} in all"
        table = self._titled(title)
        table.add_column("package", no_wrap=True)
        for name in ("time", "memory", "own time"):
            table.add_column(name, justify="right", no_wrap=True)
        if len(p.processes) > 1:
            table.add_column("pid", justify="right", no_wrap=True)
        for r in shown:
            cells = [r.package, format_seconds(r.seconds), format_bytes(r.resident_bytes, signed=True)]
            cells.append(format_seconds(r.self_seconds))
            if len(p.processes) > 1:
                cells.append(str(r.pid))
            table.add_row(*(Text(c) for c in cells))
        console.print(self._fit(table, ("own time", "pid")))
