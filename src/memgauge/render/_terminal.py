"""The short report ``memgauge run`` prints on stderr."""

from __future__ import annotations

import io

from rich.console import Console
from rich.text import Text

from memgauge._units import format_seconds
from memgauge.analysis import overhead_summary
from memgauge.model import Profile
from memgauge.render._document import Section
from memgauge.render._document_terminal import print_section
from memgauge.render._layout import console
from memgauge.render._section_core import advice_section, processes_table
from memgauge.render._section_header import header_section
from memgauge.render._section_lines import allocation_lines, cpu_lines, held_lines, leak_lines, slow_imports
from memgauge.render._section_phases import phases_table
from memgauge.render._sections import SECTIONS as DOCUMENT
from memgauge.render._text import reconciliation_terms


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
        out = console(buf, self.width, self.color)
        self._document(out, header_section(profile))
        self._document(out, phases_table(profile, self.max_phases))
        self._document(out, processes_table(profile, self.max_processes))
        self._document(out, held_lines(profile, self.cwd, self.max_lines))
        self._allocation(out, profile)
        # torch, training, I/O, GPU: the report document's, where the other formats have them too
        for _, section in DOCUMENT.built(profile):
            print_section(out, section, self.width)
        self._document(out, cpu_lines(profile, self.cwd, self.max_lines))
        self._document(out, leak_lines(profile, self.cwd, self.max_lines))
        self._document(out, slow_imports(profile))
        for note in profile.peak.notes:
            out.print(Text(f"note: {note}", style="yellow"))
        self._document(out, advice_section(profile, self.cwd))
        self._overhead(out, profile)
        return buf.getvalue()

    def _overhead(self, out: Console, profile: Profile) -> None:
        """The footer: what measuring cost, memgauge's time around the program and its own CPU."""
        summary = overhead_summary(profile)
        if summary is None:
            return
        steps = ", ".join(f"{name} {format_seconds(s)}" for name, s in summary.before)
        after = ", ".join(f"{name} {format_seconds(s)}" for name, s in summary.after)
        parts = ", ".join(f"{name} {format_seconds(s)}" for name, s in summary.cpu)
        text = (
            f"memgauge's own cost: {format_seconds(summary.before_seconds)} before the program's first "
            f"line ({steps}), {format_seconds(summary.after_seconds)} after its last ({after}); "
            f"CPU {format_seconds(summary.cpu_seconds)} ({parts})"
        )
        out.print(Text(text, style="dim"))

    def _document(self, out: Console, section: Section | None) -> None:
        if section is not None:
            print_section(out, section, self.width)

    def _allocation(self, out: Console, p: Profile) -> None:
        self._document(out, allocation_lines(p, self.cwd, self.max_lines))
        for r in p.reconciliation:
            terms = reconciliation_terms(r, len(p.processes) > 1)
            terms[0] = "  " + terms[0]
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
            out.print(Text("\n".join(lines)), overflow="fold")
            for note in r.notes:
                out.print(Text(f"    {note}", style="dim"))
