"""The remedy table and the prediction without the hardware as terminal text and as Markdown
(``memgauge fit --remedies``, ``--predict-gpu``), both the report document's
(``_section_remedies``)."""

from __future__ import annotations

from memgauge.analysis import GpuPrediction, RemedyTable
from memgauge.render._document_report import markdown_text, terminal_text
from memgauge.render._section_remedies import prediction_report, remedies_report


class TerminalRemediesRenderer:
    """The table laid out to the terminal's width: where it is too narrow, the absolute figures
    go first, each change against the baseline stays."""

    def __init__(self, width: int = 100, color: bool = False) -> None:
        self.width = width
        self.color = color

    def render(self, table: RemedyTable) -> str:
        return terminal_text(remedies_report(table), self.width, self.color)


class MarkdownRemediesRenderer:
    def render(self, table: RemedyTable) -> str:
        return markdown_text(remedies_report(table))


class TerminalPredictionRenderer:
    def __init__(self, width: int = 100, color: bool = False) -> None:
        self.width = width
        self.color = color

    def render(self, prediction: GpuPrediction, parameter: str) -> str:
        return terminal_text(prediction_report(prediction, parameter), self.width, self.color)


class MarkdownPredictionRenderer:
    def render(self, prediction: GpuPrediction, parameter: str) -> str:
        return markdown_text(prediction_report(prediction, parameter))
