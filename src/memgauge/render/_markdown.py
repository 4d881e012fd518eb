"""The run report as GitHub-flavoured markdown, for a pull-request comment.

The same figures as the terminal report, in the same words and units; only the layout differs
(GFM tables instead of aligned columns). Nothing in it depends on the clock or, when ``cwd`` is
given, on the directory it runs in, so two renders of one profile are byte-identical and a CI job
can diff them.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import (
    advise,
    exit_text,
    import_totals,
    inherited_note,
    longest_phases,
    phase_rows,
    phase_totals,
    sparkline,
    top_imports,
    top_processes,
    waiting_lines,
)
from memgauge.model import Profile
from memgauge.render._document_markdown import section_blocks
from memgauge.render._format import clip, core_share, format_peak, md_code, md_table, md_text
from memgauge.render._sections import SECTIONS as DOCUMENT
from memgauge.render._text import (
    CPU_TITLE,
    HELD_TITLE,
    LEAKS_TITLE,
    WAITING_TITLE,
    allocation_title,
    cpu_figures,
    cpu_rows,
    exit_title,
    imports_title,
    leak_figures,
    needs_lines,
    peak_note,
    phase_totals_title,
    processes_title,
    reconciliation_terms,
    where,
)


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
            _documents,
            self._lines,
            self._waiting,
            self._leaks,
            self._held_at_exit,
            self._imports,
            self._notes,
            self._advice,
        ):
            blocks += section(profile)
        return "\n\n".join("\n".join(b) for b in blocks if b) + "\n"

    def _header(self, p: Profile) -> list[list[str]]:
        blocks = [[f"### memgauge {md_code(shlex.join(p.command))}"]]
        words, tone = exit_text(p)
        # the terminal shows a failure in bold red; bold is what markdown has
        status = f"**{words}**" if tone == "bad" else words
        summary = (
            f"{status} · wall {format_seconds(p.wall_seconds)} · user {format_seconds(p.cpu.user_seconds)}"
            f" · system {format_seconds(p.cpu.system_seconds)}"
        )
        if p.wall_seconds > 0:
            summary += f" · CPU {core_share(p)}"
        blocks.append([summary])

        peak = p.peak
        needs = needs_lines(p)
        if needs is not None:
            blocks.append([f"**{needs[0]}** {md_text(needs[1])}"])
            blocks.append([f"- {md_text(row)}" for row in needs[2]])
        else:
            head = f"**resident peak {format_bytes(peak.resident_bytes)}** {peak_note(p)}"
            if peak.at_seconds is not None:
                head += f" at {format_seconds(peak.at_seconds)}"
            how = f"by {md_text(peak.method)}" + (", page cache included" if peak.includes_page_cache else "")
            if len(p.processes) > 1 or peak.includes_page_cache:
                how += f"; largest process {format_bytes(peak.largest_process_bytes)}"
            blocks.append([f"{head} · {how}"])

        series = p.timeline.cgroup_bytes or p.timeline.tree_resident_bytes
        if series:
            blocks.append(
                [
                    f"memory {md_code(sparkline(series, width=60))}"
                    f" 0 to {format_bytes(max(series))} over {format_seconds(p.wall_seconds)}"
                ]
            )
        return blocks

    def _section(
        self, title: str, headers: Sequence[str], right: Sequence[bool], rows: Sequence[Sequence[str]]
    ) -> list[list[str]]:
        # blank line between: a table straight under a paragraph line would take it as its header
        return [[f"**{title}**"], md_table(headers, ["---:" if r else ":---" for r in right], rows)]

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
            [
                *f,
                *([str(pid)] if several else []),
                md_code(where(file, line, self.cwd, function)),
                md_code(clip(source.strip())),
            ]
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
                    indent + md_text(ph.name) + ("" if ph.complete else " (unfinished)"),
                    str(ph.pid),
                    format_seconds(ph.start_seconds),
                    format_seconds(ph.duration_seconds),
                    f"{row.share:.0%}",
                    format_peak(ph.peak_resident_bytes, ph.peak_exact),
                    format_bytes(row.growth_bytes, signed=True),
                ]
            )
        headers = ["phase", "pid", "start", "duration", "share", "peak", "growth"]
        return self._section("phases", headers, [False] + [True] * 6, cells)

    def _phase_totals(self, p: Profile, records: int) -> list[list[str]]:
        """One row per phase name, as the terminal report shows them."""
        shown = longest_phases(p, self.max_phases)
        title = phase_totals_title(records, len(shown), len(phase_totals(p)))
        wall = p.wall_seconds or 1.0
        cells = [
            [
                md_text(t.name),
                str(t.count),
                format_seconds(t.seconds),
                f"{t.seconds / wall:.0%}",
                format_peak(t.peak_bytes, not t.lower_bound),
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
                md_code(shlex.join(proc.cmdline)) if proc.cmdline else "(unknown)",
            ]
            for proc in shown
        ]
        title = processes_title(len(shown), len(p.processes))
        return self._section(title, ["pid", "peak", "cpu", "command"], [True, True, True, False], cells)

    def _attribution(self, p: Profile) -> list[list[str]]:
        entries = p.peak.attribution[: self.max_lines]
        if not entries:
            return []
        rows = [([format_bytes(a.bytes)], a.pid, a.file, a.line, a.source, "") for a in entries]
        blocks = self._line_table(p, HELD_TITLE, ["bytes"], rows)
        return blocks + ([[md_text(inherited_note(p))]] if inherited_note(p) else [])

    def _allocation(self, p: Profile) -> list[list[str]]:
        alloc = p.allocation_peak
        if alloc is None:
            return []
        rows = [
            ([format_bytes(a.bytes)], a.pid, a.file, a.line, a.source, "")
            for a in alloc.attribution[: self.max_lines]
        ]
        blocks = self._line_table(p, allocation_title(alloc.bytes), ["bytes"], rows)
        items: list[str] = []
        for r in p.reconciliation:
            items.append("- " + " ".join(reconciliation_terms(r, len(p.processes) > 1)))
            items += [f"  - {md_text(note)}" for note in r.notes]
        if items:
            blocks.append(items)
        return blocks

    def _lines(self, p: Profile) -> list[list[str]]:
        table_rows = cpu_rows(p, self.max_lines)
        if not table_rows:
            return []
        return self._line_table(p, CPU_TITLE, cpu_figures(p), table_rows)

    def _waiting(self, p: Profile) -> list[list[str]]:
        stats = [r.stats for r in waiting_lines(p)]
        if not stats:
            return []
        rows = [([format_seconds(s.wait_seconds)], s.pid, s.file, s.line, s.source, "") for s in stats]
        return self._line_table(p, WAITING_TITLE, ["wait"], rows)

    def _leaks(self, p: Profile) -> list[list[str]]:
        if not p.leaks:
            return []
        rows = [
            (
                leak_figures(leak.rate_bytes_per_second, leak.retained_bytes),
                leak.pid,
                leak.file,
                leak.line,
                leak.source,
                "",
            )
            for leak in p.leaks[: self.max_lines]
        ]
        return self._line_table(p, LEAKS_TITLE, ["rate", "retained"], rows)

    def _held_at_exit(self, p: Profile) -> list[list[str]]:
        # both absent from profiles without line samples: their reports are unchanged
        rows = [
            ([format_bytes(h.bytes)], h.pid, h.file, h.line, h.source, "")
            for h in p.held_at_exit[: self.max_lines]
        ]
        blocks = self._line_table(p, exit_title(p), ["held"], rows) if rows else []
        if p.leak_note:
            blocks.append([f"note: {md_text(p.leak_note)}"])
        return blocks

    def _imports(self, p: Profile) -> list[list[str]]:
        shown = top_imports(p, 5, by="time", least_seconds=0.01)
        if not shown:
            return []
        several = len(p.processes) > 1
        headers = ["package", "time", "memory", "own time", *(["pid"] if several else [])]
        cells = [
            [
                md_text(r.package),
                format_seconds(r.seconds),
                format_bytes(r.resident_bytes, signed=True),
                format_seconds(r.self_seconds),
                *([str(r.pid)] if several else []),
            ]
            for r in shown
        ]
        title = imports_title(import_totals(p))
        return self._section(title, headers, [False] + [True] * (len(headers) - 1), cells)

    def _notes(self, p: Profile) -> list[list[str]]:
        if not p.peak.notes:
            return []
        lines: list[str] = []
        for note in p.peak.notes:
            if lines:
                lines.append(">")
            lines.append(f"> note: {md_text(note)}")
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
            items.append(f"- **{md_text(a.title)}**" + (f" at {md_code(a.where)}" if a.where else ""))
            if a.evidence:
                evidence = " · ".join(f"{md_text(e.label)} {md_text(e.value)}" for e in a.evidence)
                items += ["", f"  {evidence}"]
            if a.detail:
                items += ["", f"  {md_text(a.detail)}"]
        return [["**advice**"], items]


def _documents(profile: Profile) -> list[list[str]]:
    """The sections of the report document (torch, training, I/O, GPU), as every format has them."""
    return [block for _, section in DOCUMENT.built(profile) for block in section_blocks(section)]
