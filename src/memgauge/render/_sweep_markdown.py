"""The Markdown report of ``memgauge sweep``: its document sections (``_sweep_document``), each
written by the document's Markdown backend. Markdown has no width: every column is kept, and a
failed run's last line is quoted whole."""

from __future__ import annotations

from memgauge.analysis import SweepAnalysis
from memgauge.render._document_markdown import section_blocks
from memgauge.render._sweep_document import MAX_ROWS, sweep_sections


class MarkdownSweepRenderer:
    def __init__(self, *, max_rows: int = MAX_ROWS) -> None:
        self.max_rows = max_rows

    def render(self, analysis: SweepAnalysis) -> str:
        blocks = [b for s in sweep_sections(analysis, self.max_rows) for b in section_blocks(s)]
        return "\n\n".join("\n".join(b) for b in blocks if b) + "\n"
