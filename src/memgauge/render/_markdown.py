"""The run report as GitHub-flavoured markdown, for a pull-request comment.

The same figures as the terminal report, in the same words and units; only the layout differs
(GFM tables instead of aligned columns). Nothing in it depends on the clock or, when ``cwd`` is
given, on the directory it runs in, so two renders of one profile are byte-identical and a CI job
can diff them.
"""

from __future__ import annotations

from memgauge.model import Profile
from memgauge.render._document import Section
from memgauge.render._document_markdown import section_blocks
from memgauge.render._format import md_text
from memgauge.render._section_core import advice_section, processes_table
from memgauge.render._section_header import header_section
from memgauge.render._section_lines import allocation_lines, cpu_lines, held_lines, leak_lines, slow_imports
from memgauge.render._section_phases import phases_table
from memgauge.render._sections import SECTIONS as DOCUMENT
from memgauge.render._text import reconciliation_terms


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
        blocks += section_blocks(header_section(profile))
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
