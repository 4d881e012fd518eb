"""The text reports of a run (terminal and Markdown) as one list of document sections, in report
order: each renderer renders them one after the other with its backend."""

from __future__ import annotations

from memgauge.render._section_core import advice_section, overhead_footer, peak_notes, processes_table
from memgauge.render._section_header import header_section
from memgauge.render._section_lines import (
    allocation_lines,
    cpu_lines,
    held_at_exit,
    held_lines,
    leak_suspects,
    slow_imports,
)
from memgauge.render._section_phases import phases_table
from memgauge.render._sections import SECTIONS as DOCUMENT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    from memgauge.model import Profile
    from memgauge.render._document import Section

    class Limits(Protocol):
        """A text renderer's options: how many rows of each table, and the directory paths are
        shown from."""

        cwd: str | None
        max_lines: int
        max_processes: int
        max_phases: int


def report_sections(p: Profile, limits: Limits) -> list[Section]:
    """The header, the phases, the processes, the lines holding the peaks (the allocation peak's
    reconciled), the section folders' (torch, training, I/O, GPU), the CPU, waiting, leaking and
    held lines, the slowest imports, the peak's notes, the advice and memgauge's own cost."""
    cwd, max_lines = limits.cwd, limits.max_lines
    built = [
        header_section(p),
        phases_table(p, limits.max_phases),
        processes_table(p, limits.max_processes),
        held_lines(p, cwd, max_lines),
        allocation_lines(p, cwd, max_lines),
        *(section for _, section in DOCUMENT.built(p)),
        cpu_lines(p, cwd, max_lines),
        leak_suspects(p, cwd, max_lines),
        held_at_exit(p, cwd, max_lines),
        slow_imports(p),
        peak_notes(p),
        advice_section(p, cwd),
        overhead_footer(p),
    ]
    return [section for section in built if section is not None]
