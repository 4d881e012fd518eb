"""The short report ``memgauge run`` prints on stderr: the report's document sections
(``_section_report``), each printed by the terminal's backend."""

from __future__ import annotations

import io

from memgauge.model import Profile
from memgauge.render._document_terminal import print_section
from memgauge.render._layout import console
from memgauge.render._section_report import report_sections


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
        sections = report_sections(profile, self)
        for section in sections:
            print_section(out, section, self.width)
        return buf.getvalue()
