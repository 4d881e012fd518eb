"""The run report as GitHub-flavoured markdown, for a pull-request comment.

The same figures as the terminal report, in the same words and units; only the layout differs
(GFM tables instead of aligned columns). Nothing in it depends on the clock or, when ``cwd`` is
given, on the directory it runs in, so two renders of one profile are byte-identical and a CI job
can diff them.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import (
    advise,
    exit_text,
    phase_rows,
    phase_totals,
    short_path,
    sparkline,
    top_lines,
    top_processes,
)
from memgauge.model import UNBOUNDED_NOTE, Profile
from memgauge.render._text import CPU_FIGURES, cpu_rows

# A minified or generated line would make a table row thousands of characters wide.
_MAX_SOURCE = 120
# Characters that start inline markup (emphasis, links, HTML, entities, strikethrough); escaped
# in plain text so a phase or package name is shown as written. '|' is left to _cell: only a
# table row splits at it.
_PLAIN_SPECIALS = re.compile(r"([\\`*_\[\]<>~&])")
_BACKTICK_RUN = re.compile(r"`+")


def _one_line(text: str) -> str:
    # A newline would end a table row or a heading.
    return " ".join(text.splitlines()) if ("\n" in text or "\r" in text) else text


def _plain(text: str) -> str:
    return _PLAIN_SPECIALS.sub(r"\\\1", _one_line(text))


def _code(text: str) -> str:
    """A code span showing ``text`` verbatim, whatever backticks it holds: the fence is one
    backtick longer than its longest run, padded with a space where the content starts or ends
    with a backtick or a space (GFM strips one space from each side when both are there)."""
    text = _one_line(text)
    if not text:
        return ""
    fence = "`" * (max((len(m) for m in _BACKTICK_RUN.findall(text)), default=0) + 1)
    pad = " " if text[0] in "` " or text[-1] in "` " else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _cell(text: str) -> str:
    # GFM splits a row at every unescaped '|', inside code spans too; '\|' is turned back into
    # '|' before the cell's inline content is parsed, code spans included.
    return text.replace("|", "\\|")


def _table(headers: Sequence[str], right: Sequence[bool], rows: Sequence[Sequence[str]]) -> list[str]:
    def row(cells: Sequence[str]) -> str:
        return "| " + " | ".join(_cell(c) for c in cells) + " |"

    out = [row(headers), "| " + " | ".join("---:" if r else ":---" for r in right) + " |"]
    out += [row(cells) for cells in rows]
    return out


def _cut(source: str) -> str:
    source = source.strip()
    return source if len(source) <= _MAX_SOURCE else source[: _MAX_SOURCE - 1] + "…"


class MarkdownRenderer:
    def __init__(
        self, max_processes: int = 5, max_lines: int = 8, cwd: str | None = None, max_phases: int = 30
    ) -> None:
        self.max_processes = max_processes
        self.max_lines = max_lines
        self.cwd = cwd
        self.max_phases = max_phases

    def render(self, profile: Profile) -> str:
        blocks: list[list[str]] = []
        blocks += self._header(profile)
        for section in (
            self._phases,
            self._processes,
            self._attribution,
            self._allocation,
            self._lines,
            self._waiting,
            self._leaks,
            self._imports,
            self._notes,
            self._advice,
        ):
            blocks += section(profile)
        return "\n\n".join("\n".join(b) for b in blocks if b) + "\n"

    def _header(self, p: Profile) -> list[list[str]]:
        blocks = [[f"### memgauge {_code(shlex.join(p.command))}"]]
        words, tone = exit_text(p)
        # the terminal shows a failure in bold red; bold is what markdown has
        status = f"**{words}**" if tone == "bad" else words
        cpu = p.cpu.user_seconds + p.cpu.system_seconds
        summary = (
            f"{status} · wall {format_seconds(p.wall_seconds)} · user {format_seconds(p.cpu.user_seconds)}"
            f" · system {format_seconds(p.cpu.system_seconds)}"
        )
        if p.wall_seconds > 0:
            summary += f" · CPU {cpu / p.wall_seconds:.0%} of one core"
        blocks.append([summary])

        peak = p.peak
        head = f"**resident peak {format_bytes(peak.resident_bytes)}**"
        if UNBOUNDED_NOTE in peak.notes:
            head += " (a lower bound)"
        elif peak.error_bound_bytes:
            head += f" ±{format_bytes(peak.error_bound_bytes)}"
        else:
            head += " (exact)"
        if peak.at_seconds is not None:
            head += f" at {format_seconds(peak.at_seconds)}"
        how = f"by {_plain(peak.method)}" + (", page cache included" if peak.includes_page_cache else "")
        if len(p.processes) > 1 or peak.includes_page_cache:
            how += f"; largest process {format_bytes(peak.largest_process_bytes)}"
        blocks.append([f"{head} · {how}"])

        series = p.timeline.cgroup_bytes or p.timeline.tree_resident_bytes
        if series:
            blocks.append(
                [
                    f"memory {_code(sparkline(series, width=60))}"
                    f" 0 to {format_bytes(max(series))} over {format_seconds(p.wall_seconds)}"
                ]
            )
        return blocks

    def _section(
        self, title: str, headers: Sequence[str], right: Sequence[bool], rows: Sequence[Sequence[str]]
    ) -> list[list[str]]:
        # blank line between: a table straight under a paragraph line would take it as its header
        return [[f"**{title}**"], _table(headers, right, rows)]

    def _where(self, file: str, line: int, function: str = "") -> str:
        where = f"{short_path(file, self.cwd)}:{line}" if line else file
        return _code(f"{where} {function}" if function else where)

    def _line_table(
        self,
        p: Profile,
        title: str,
        figures: Sequence[str],
        rows: Sequence[tuple[Sequence[str], int, str, int, str, str]],
    ) -> list[list[str]]:
        """Figures, then the process (when there are several), the line and its source; each row
        is (figures, pid, file, line, source, function)."""
        several = len(p.processes) > 1
        headers = [*figures, *(["pid"] if several else []), "line", "source"]
        right = [True] * len(figures) + ([True] if several else []) + [False, False]
        cells = [
            [*f, *([str(pid)] if several else []), self._where(file, line, function), _code(_cut(source))]
            for f, pid, file, line, source, function in rows
        ]
        return self._section(title, headers, right, cells)

    def _phases(self, p: Profile) -> list[list[str]]:
        rows = phase_rows(p)
        if not rows:
            return []
        if len(rows) > self.max_phases:
            # a phase per batch: thousands of rows, past GitHub's 65536 characters for a comment
            return self._phase_totals(p, len(rows))
        cells = []
        for row in rows:
            ph = row.phase
            indent = "&nbsp;" * 4 * (ph.depth - 1) + "↳ " if ph.depth > 0 else ""
            cells.append(
                [
                    indent + _plain(ph.name) + ("" if ph.complete else " (unfinished)"),
                    str(ph.pid),
                    format_seconds(ph.start_seconds),
                    format_seconds(ph.duration_seconds),
                    f"{row.share:.0%}",
                    format_bytes(ph.peak_resident_bytes) + ("" if ph.peak_exact else " ≥"),
                    format_bytes(row.growth_bytes, signed=True),
                ]
            )
        headers = ["phase", "pid", "start", "duration", "share", "peak", "growth"]
        return self._section("phases", headers, [False] + [True] * 6, cells)

    def _phase_totals(self, p: Profile, records: int) -> list[list[str]]:
        """One row per phase name, as the terminal report shows them."""
        totals = phase_totals(p)
        shown = sorted(totals, key=lambda t: -t.seconds)[: self.max_phases]
        title = f"phases ({records} records, summed by name"
        title += (
            f"; the {len(shown)} of {len(totals)} names with the most time)"
            if len(shown) < len(totals)
            else ")"
        )
        wall = p.wall_seconds or 1.0
        cells = [
            [
                _plain(t.name),
                str(t.count),
                format_seconds(t.seconds),
                f"{t.seconds / wall:.0%}",
                format_bytes(t.peak_bytes) + (" ≥" if t.lower_bound else ""),
            ]
            for t in shown
        ]
        headers = ["phase", "count", "total time", "share", "max peak"]
        return self._section(title, headers, [False] + [True] * 4, cells)

    def _processes(self, p: Profile) -> list[list[str]]:
        if len(p.processes) <= 1:
            return []
        shown = top_processes(p, self.max_processes)
        cells = [
            [
                str(proc.pid),
                format_bytes(proc.peak_resident_bytes),
                format_seconds(proc.cpu_user_seconds + proc.cpu_system_seconds),
                _code(shlex.join(proc.cmdline)) if proc.cmdline else "(unknown)",
            ]
            for proc in shown
        ]
        title = f"processes ({len(shown)} of {len(p.processes)}, by peak)"
        return self._section(title, ["pid", "peak", "cpu", "command"], [True, True, True, False], cells)

    def _attribution(self, p: Profile) -> list[list[str]]:
        entries = p.peak.attribution[: self.max_lines]
        if not entries:
            return []
        rows = [([format_bytes(a.bytes)], a.pid, a.file, a.line, a.source, "") for a in entries]
        return self._line_table(p, "resident peak held by (sampled)", ["bytes"], rows)

    def _allocation(self, p: Profile) -> list[list[str]]:
        alloc = p.allocation_peak
        if alloc is None:
            return []
        rows = [
            ([format_bytes(a.bytes)], a.pid, a.file, a.line, a.source, "")
            for a in alloc.attribution[: self.max_lines]
        ]
        title = f"allocation peak {format_bytes(alloc.bytes)}, live at it (memray)"
        blocks = self._line_table(p, title, ["bytes"], rows)
        items: list[str] = []
        for r in p.reconciliation:
            items.append(
                f"- {'[' + str(r.pid) + '] ' if len(p.processes) > 1 else ''}process peak "
                f"{format_bytes(r.resident_peak_bytes)} = baseline {format_bytes(r.baseline_bytes)} "
                f"+ allocations {format_bytes(r.allocation_peak_bytes)} "
                f"- never written {format_bytes(r.untouched_bytes)} + other {format_bytes(r.other_bytes)}"
            )
            items += [f"  - {_plain(note)}" for note in r.notes]
        if items:
            blocks.append(items)
        return blocks

    def _lines(self, p: Profile) -> list[list[str]]:
        table_rows = cpu_rows(p, self.max_lines)
        if not table_rows:
            return []
        return self._line_table(p, "CPU time by line (sampled)", CPU_FIGURES, table_rows)

    def _waiting(self, p: Profile) -> list[list[str]]:
        waiting = top_lines(p, 3, by="wait", user_only=True)
        if not waiting or waiting[0].stats.wait_seconds < 0.05 * p.wall_seconds:
            return []
        stats = [r.stats for r in waiting]
        rows = [([format_seconds(s.wait_seconds)], s.pid, s.file, s.line, s.source, "") for s in stats]
        return self._line_table(p, "waiting (I/O, sleep, locks)", ["wait"], rows)

    def _leaks(self, p: Profile) -> list[list[str]]:
        if not p.leaks:
            return []
        rows = [
            (
                [f"{format_bytes(round(leak.rate_bytes_per_second))}/s", format_bytes(leak.retained_bytes)],
                leak.pid,
                leak.file,
                leak.line,
                leak.source,
                "",
            )
            for leak in p.leaks[: self.max_lines]
        ]
        title = "leak suspects (retained memory still growing at the end)"
        return self._line_table(p, title, ["rate", "retained"], rows)

    def _imports(self, p: Profile) -> list[list[str]]:
        shown = [r for r in sorted(p.imports, key=lambda r: -r.seconds) if r.seconds >= 0.01][:5]
        if not shown:
            return []
        total_t = sum(r.self_seconds for r in p.imports)
        total_b = sum(r.self_resident_bytes for r in p.imports)
        title = f"imports: {format_seconds(total_t)}, {format_bytes(total_b, signed=True)} in all"
        several = len(p.processes) > 1
        headers = ["package", "time", "memory", "own time", *(["pid"] if several else [])]
        cells = [
            [
                _plain(r.package),
                format_seconds(r.seconds),
                format_bytes(r.resident_bytes, signed=True),
                format_seconds(r.self_seconds),
                *([str(r.pid)] if several else []),
            ]
            for r in shown
        ]
        return self._section(title, headers, [False] + [True] * (len(headers) - 1), cells)

    def _notes(self, p: Profile) -> list[list[str]]:
        if not p.peak.notes:
            return []
        lines: list[str] = []
        for note in p.peak.notes:
            if lines:
                lines.append(">")
            lines.append(f"> note: {_plain(note)}")
        return [lines]

    def _advice(self, p: Profile) -> list[list[str]]:
        found = advise(p, self.cwd)
        if not found:
            return []
        items: list[str] = []
        for a in found:
            # a blank line between items (a loose list): each has paragraphs of its own
            if items:
                items.append("")
            items.append(f"- **{_plain(a.title)}**" + (f" at {_code(a.where)}" if a.where else ""))
            if a.evidence:
                evidence = " · ".join(f"{_plain(e.label)} {_plain(e.value)}" for e in a.evidence)
                items += ["", f"  {evidence}"]
            if a.detail:
                items += ["", f"  {_plain(a.detail)}"]
        return [["**advice**"], items]
