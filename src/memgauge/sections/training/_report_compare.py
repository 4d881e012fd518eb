"""The training part of ``memgauge compare`` (the registry's "compare_report"), built once on the
report document: the steady figures of every run side by side and each run's speed-up over the
baseline with its ~95% interval. Nothing when no run has training figures, so other comparisons
are unchanged. The rows come from ``compare_training`` (the registry's "compare"), the
comparison's part "training"."""

from __future__ import annotations

from memgauge.analysis import Comparison
from memgauge.render import Breaks, Change, Column, Compared, Heading, Only, Paragraph, Section
from memgauge.sections.training._analysis_compare import TrainingComparison
from memgauge.sections.training._report_text import figure_value

TITLE = "training throughput, steady steps (—: no such figure in that run)"


def _speedups(c: Comparison, t: TrainingComparison) -> tuple[str, ...]:
    return tuple(
        s.sentence(c.baseline)
        if s is not None
        else f"{name} vs {c.baseline}: too few steady steps for a speed-up"
        for s, name in zip(t.speedups, c.names[1:], strict=True)
    )


def section(c: Comparison, t: TrainingComparison) -> Section:
    # the figures alone: a rate's change reads as the speed-up below, with its noise
    rows = tuple(
        ((r.label,), tuple(Change(figure_value(v, r.unit), sort=figure_value(v, r.unit)) for v in r.values))
        for r in t.rows
    )
    table = Compared(TITLE, (Column("figure", "name", most=20),), c.names, rows, changes=False)
    heading = Heading("Training throughput (steady steps)", level=3)
    return Section(
        "training throughput",
        (
            Only(("markdown",), (heading, Paragraph("— : no such figure in that run."))),
            table,
            Breaks(_speedups(c, t)),
        ),
        "Over each run's steady steps (warm-up and the FLOP-counted step left out). A speed-up's "
        "interval comes from the spread of the steps' times (about 95%); one that holds 1x is no "
        "change beyond the noise.",
    )
