"""The training part of ``memgauge compare`` in each format: the steady figures of every run side
by side and each run's speed-up over the baseline with its ~95% interval. Nothing when no run has
training figures, so other comparisons are unchanged (the registry's "compare_report"). The rows
come from ``compare_training`` (the registry's "compare"), the comparison's part "training"."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from memgauge.analysis import Comparison
from memgauge.render import Layout, Part, items, md_row, md_text, table, text
from memgauge.sections.training._analysis_compare import TrainingComparison
from memgauge.sections.training._report_text import figure_value

TITLE = "training throughput, steady steps (—: no such figure in that run)"


def _speedups(c: Comparison, t: TrainingComparison) -> list[str]:
    return [
        s.sentence(c.baseline)
        if s is not None
        else f"{name} vs {c.baseline}: too few steady steps for a speed-up"
        for s, name in zip(t.speedups, c.names[1:], strict=True)
    ]


def terminal(out: Console, c: Comparison, t: TrainingComparison, width: int) -> None:
    layout = Layout(width, TITLE, cut_figures=True)
    layout.name("figure", most=20)
    for name in c.names:
        layout.figure(name)
    for row in t.rows:
        layout.add_row(Text(row.label), *(Text(figure_value(v, row.unit)) for v in row.values))
    out.print(layout.fit())
    for line in _speedups(c, t):
        out.print(Text(line), overflow="fold")


def markdown(c: Comparison, t: TrainingComparison) -> list[str]:
    out = ["", "### Training throughput (steady steps)", "", "— : no such figure in that run.", ""]
    out.append(md_row(["figure", *(md_text(n) for n in c.names)]))
    out.append(md_row(["---", *(["---:"] * len(c.names))]))
    out += [md_row([md_text(r.label), *(figure_value(v, r.unit) for v in r.values)]) for r in t.rows]
    out += [""] + [md_text(line) + "  " for line in _speedups(c, t)]
    out[-1] = out[-1].rstrip()
    return out


def html(c: Comparison, t: TrainingComparison) -> Part:
    rows = [[text(r.label), *(text(figure_value(v, r.unit)) for v in r.values)] for r in t.rows]
    return Part(
        table([("figure", False)] + [(name, True) for name in c.names], rows) + items(_speedups(c, t)),
        "training throughput",
        "Over each run's steady steps (warm-up and the FLOP-counted step left out). A speed-up's "
        "interval comes from the spread of the steps' times (about 95%); one that holds 1x is no "
        "change beyond the noise.",
    )
