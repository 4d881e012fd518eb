"""The terminal report of ``memgauge sweep``: its document sections (``_sweep_document``), each
printed by the document's terminal backend. Every string that comes from the record (a parameter
value, a phase name, the command) is a ``Text`` there, never rich markup: a value such as
``[bold]x`` is shown as typed."""

from __future__ import annotations

import io

from memgauge.analysis import SweepAnalysis
from memgauge.render._document_terminal import print_section
from memgauge.render._layout import console
from memgauge.render._sweep_document import MAX_ROWS, sweep_sections


class TerminalSweepRenderer:
    def __init__(self, *, width: int = 100, color: bool = False, max_rows: int = MAX_ROWS) -> None:
        self.width = width
        self.color = color
        self.max_rows = max_rows

    def render(self, analysis: SweepAnalysis) -> str:
        buf = io.StringIO()
        out = console(buf, self.width, self.color)
        for section in sweep_sections(analysis, self.max_rows):
            print_section(out, section, self.width)
        # rich pads a table's rows to its width: spaces nobody sees, that a diff or a pager shows
        return "\n".join(line.rstrip(" ") for line in buf.getvalue().split("\n"))
