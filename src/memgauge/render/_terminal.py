"""The short report ``memgauge run`` prints on stderr."""

from __future__ import annotations

import io
import re
import shlex

from rich.console import Console
from rich.text import Text

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import exit_text, overhead_summary, sparkline
from memgauge.model import Profile
from memgauge.render._document import Section
from memgauge.render._document_terminal import print_section
from memgauge.render._format import core_share
from memgauge.render._layout import console, wrapped
from memgauge.render._section_core import advice_section, processes_table
from memgauge.render._section_lines import allocation_lines, cpu_lines, held_lines, leak_lines, slow_imports
from memgauge.render._section_phases import phases_table
from memgauge.render._sections import SECTIONS as DOCUMENT
from memgauge.render._text import (
    needs_lines,
    peak_note,
    reconciliation_terms,
)


def _exit_text(profile: Profile) -> Text:
    words, tone = exit_text(profile)
    return Text(words, style={"good": "green", "bad": "bold red"}.get(tone, ""))


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
        self._header(out, profile)
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

    def _header(self, out: Console, p: Profile) -> None:
        title = Text("memgauge ", style="bold")
        title.append(shlex.join(p.command), style="cyan")
        out.print(title)
        times = [
            _exit_text(p),
            Text(f"wall {format_seconds(p.wall_seconds)}"),
            Text(f"user {format_seconds(p.cpu.user_seconds)}"),
            Text(f"system {format_seconds(p.cpu.system_seconds)}"),
        ]
        if p.wall_seconds > 0:
            times.append(Text(f"CPU {core_share(p)}"))
        for i, part in enumerate(times[:-1]):
            # the separator in no colour, not in the exit status's red
            times[i] = Text.assemble(part, " ·")
        out.print(wrapped(times, self.width))
        needs = needs_lines(p)
        if needs is not None:
            head = Text("container needs ", style="bold")
            head.append(needs[0].removeprefix("container needs "), style="bold magenta")
            out.print(wrapped([head, Text(needs[1])], self.width))
            for row in needs[2]:
                # broken after a comma, a colon or a dot, so that a figure keeps its unit
                parts = [Text(part, style="dim") for part in re.split(r"(?<=[,:·]) ", "  " + row)]
                out.print(wrapped(parts, self.width, indent="    "))
        else:
            self._resident_peak(out, p)
        self._sparkline(out, p)

    def _resident_peak(self, out: Console, p: Profile) -> None:
        peak = p.peak
        head = Text("resident peak ", style="bold")
        head.append(format_bytes(peak.resident_bytes), style="bold magenta")
        parts = [head, Text(peak_note(p))]
        if peak.at_seconds is not None:
            parts.append(Text(f"at {format_seconds(peak.at_seconds)}"))
        out.print(wrapped(parts, self.width))
        # Text, not markup: the method is a string from the profile
        how = [Text(f"  by {peak.method}", style="dim")]
        if peak.includes_page_cache:
            how[-1].append(",")
            how.append(Text("page cache included", style="dim"))
        if len(p.processes) > 1 or peak.includes_page_cache:
            how[-1].append(";")
            how.append(Text(f"largest process {format_bytes(peak.largest_process_bytes)}", style="dim"))
        out.print(wrapped(how, self.width))

    def _sparkline(self, out: Console, p: Profile) -> None:
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
            out.print(spark + tail)

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
