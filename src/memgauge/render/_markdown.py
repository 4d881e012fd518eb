"""The run report as GitHub-flavoured markdown, for a pull-request comment.

The same figures as the terminal report, in the same words and units, from the same document
sections (``_section_report``); only the layout differs (GFM tables instead of aligned columns).
Nothing in it depends on the clock or, when ``cwd`` is given, on the directory it runs in, so two
renders of one profile are byte-identical and a CI job can diff them.
"""

from __future__ import annotations

from memgauge.model import Profile
from memgauge.render._document_markdown import section_blocks
from memgauge.render._section_report import report_sections


class MarkdownRenderer:
    def __init__(
        self, max_processes: int = 5, max_lines: int = 8, cwd: str | None = None, max_phases: int = 30
    ) -> None:
        self.max_processes = max_processes
        self.max_lines = max_lines
        self.cwd = cwd
        self.max_phases = max_phases

    def render(self, profile: Profile) -> str:
        sections = report_sections(profile, self)
        blocks = [block for section in sections for block in section_blocks(section)]
        return "\n\n".join("\n".join(b) for b in blocks if b) + "\n"
