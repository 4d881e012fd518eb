"""The text reports of ``memgauge fit``, terminal and Markdown, both the report document's
(``_section_fit``), and the progress line of each trial."""

from __future__ import annotations

from memgauge.model import FitRecord, FitTrial
from memgauge.render._document_report import markdown_text, terminal_text
from memgauge.render._section_fit import figure, fit_report


def fit_trial_line(parameter: str, trial: FitTrial) -> str:
    """One trial as the progress line ``memgauge fit`` writes on stderr."""
    figures = ", ".join(f"{m} {figure(m, v)}" for m, v in trial.figures.items())
    if trial.error is not None:
        verdict = f"failed ({trial.error})"
    elif trial.fits:
        verdict = "fits"
    else:
        verdict = "over (" + ", ".join(trial.over) + ")"
    how = "law" if trial.guided else "step"
    return f"  {parameter}={trial.value:<10} {verdict:<18} {figures}  [{how}, {trial.seconds:.1f} s]"


class TerminalFitRenderer:
    def __init__(self, width: int = 100, color: bool = False) -> None:
        self.width = width
        self.color = color

    def render(self, record: FitRecord) -> str:
        return terminal_text(fit_report(record), self.width, self.color)


class MarkdownFitRenderer:
    def render(self, record: FitRecord) -> str:
        return markdown_text(fit_report(record))
