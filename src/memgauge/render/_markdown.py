"""The run report as GitHub-flavoured markdown, for a pull-request comment.

The same figures as the terminal report, in the same words and units; only the layout differs
(GFM tables instead of aligned columns). Nothing in it depends on the clock or, when ``cwd`` is
given, on the directory it runs in, so two renders of one profile are byte-identical and a CI job
can diff them.
"""

from __future__ import annotations

import shlex

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import exit_text, sparkline
from memgauge.model import Profile
from memgauge.render._document import Section
from memgauge.render._document_markdown import section_blocks
from memgauge.render._format import core_share, md_code, md_text
from memgauge.render._section_core import advice_section, processes_table
from memgauge.render._section_lines import allocation_lines, cpu_lines, held_lines, leak_lines, slow_imports
from memgauge.render._section_phases import phases_table
from memgauge.render._sections import SECTIONS as DOCUMENT
from memgauge.render._text import (
    needs_lines,
    peak_note,
    reconciliation_terms,
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
            lambda p: self._document(phases_table(p, self.max_phases)),
            lambda p: self._document(processes_table(p, self.max_processes)),
            lambda p: self._document(held_lines(p, self.cwd, self.max_lines)),
            self._allocation,
            _documents,
            lambda p: self._document(cpu_lines(p, self.cwd, self.max_lines)),
            lambda p: self._document(leak_lines(p, self.cwd, self.max_lines)),
            lambda p: self._document(slow_imports(p)),
            self._notes,
            lambda p: self._document(advice_section(p, self.cwd)),
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

    def _document(self, section: Section | None) -> list[list[str]]:
        return [] if section is None else section_blocks(section)

    def _allocation(self, p: Profile) -> list[list[str]]:
        blocks = self._document(allocation_lines(p, self.cwd, self.max_lines))
        items: list[str] = []
        for r in p.reconciliation:
            items.append("- " + " ".join(reconciliation_terms(r, len(p.processes) > 1)))
            items += [f"  - {md_text(note)}" for note in r.notes]
        if items:
            blocks.append(items)
        return blocks

    def _notes(self, p: Profile) -> list[list[str]]:
        if not p.peak.notes:
            return []
        lines: list[str] = []
        for note in p.peak.notes:
            if lines:
                lines.append(">")
            lines.append(f"> note: {md_text(note)}")
        return [lines]


def _documents(profile: Profile) -> list[list[str]]:
    """The sections of the report document (torch, training, I/O, GPU), as every format has them."""
    return [block for _, section in DOCUMENT.built(profile) for block in section_blocks(section)]
