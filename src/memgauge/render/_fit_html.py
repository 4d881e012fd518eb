"""The JSON and HTML reports of ``memgauge fit``. The JSON report is the record itself
(``FitRecord.to_dict``); the HTML page shows the report document's sections (``_section_fit``:
the answer, the trials, where they were not monotonic) and, its own, each limited figure drawn
against the value with the fitted law and the budget's line (through the sweep page's growth
charts)."""

from __future__ import annotations

import json
import math
import shlex
from typing import Any

from memgauge.model import FitRecord
from memgauge.render._document_report import page_sections
from memgauge.render._format import esc
from memgauge.render._html_page import page
from memgauge.render._html_sweep_charts import canvases
from memgauge.render._section_fit import LABELS, UNITS, figure, fit_report
from memgauge.render._sweep_json import finite

_SAMPLES = 40


class JsonFitRenderer:
    def render(self, record: FitRecord) -> str:
        return json.dumps(finite(record.to_dict()), indent=2) + "\n"


def fit_charts(record: FitRecord) -> list[dict[str, Any]]:
    """One growth chart per limited metric: the trials that fit, those over, the law and the limit."""
    out: list[dict[str, Any]] = []
    for i, metric in enumerate(record.budget):
        trials = [t for t in record.trials if metric in t.figures]
        if not trials:
            continue
        xs = [float(t.value) for t in trials]
        lo, hi = min(xs), max(xs)
        limit = record.budget[metric]
        fits = [[float(t.value), t.figures[metric]] for t in trials if t.fits]
        over = [[float(t.value), t.figures[metric]] for t in trials if not t.fits]
        series: list[dict[str, Any]] = [
            {"label": "fits", "runs": fits, "fit": [], "law": None, "prediction": None},
            {"label": "over the budget", "runs": over, "fit": [], "law": None, "prediction": None},
            {
                "label": "budget",
                "runs": [],
                "fit": [[lo, limit], [hi, limit]],
                "law": f"{figure(metric, limit)}",
                "prediction": None,
            },
        ]
        if metric in record.aims and record.aims[metric] != limit:
            aim = record.aims[metric]
            series.append(
                {
                    "label": "margin",
                    "runs": [],
                    "fit": [[lo, aim], [hi, aim]],
                    "law": figure(metric, aim),
                    "prediction": None,
                }
            )
        law = _law_curve(record, metric, lo, hi)
        if law:
            series.append(
                {"label": "law", "runs": [], "fit": law, "law": record.laws.get(metric), "prediction": None}
            )
        if record.value is not None:
            answer = next((t for t in trials if t.value == record.value), None)
            if answer is not None:
                series.append(
                    {
                        "label": f"answer: {record.parameter}={record.value}",
                        "runs": [[float(answer.value), answer.figures[metric]]],
                        "fit": [],
                        "law": None,
                        "prediction": None,
                    }
                )
        out.append(
            {
                "kind": "growth",
                "id": f"chart-fit-{i}",
                "title": f"{LABELS.get(metric, metric)} vs {record.parameter}",
                "yTitle": LABELS.get(metric, metric),
                "metric": metric,
                "unit": UNITS.get(metric, "count"),
                "param": record.parameter,
                "logX": hi > 10 * max(lo, 1e-12),
                "logY": False,
                "series": series,
            }
        )
    return out


def _law_curve(record: FitRecord, metric: str, lo: float, hi: float) -> list[list[float]]:
    """The fitted law sampled over the values tried (the analysis's law, refitted: the record keeps
    its text only)."""
    from memgauge.analysis import select_law

    points = [
        (float(t.value), t.figures[metric]) for t in record.trials if metric in t.figures and t.error is None
    ]
    growth = select_law([x for x, _ in points], [y for _, y in points])
    if growth is None or hi <= lo:
        return []
    step = (hi - lo) / (_SAMPLES - 1)
    curve = [[lo + i * step, growth.best.predict(lo + i * step)] for i in range(_SAMPLES)]
    return [p for p in curve if math.isfinite(p[1])]


class HtmlFitRenderer:
    def render(self, record: FitRecord) -> str:
        command = shlex.join(record.command)
        charts = fit_charts(record)
        # the page names the command in its title; the answer heads its first section
        first, *rest = fit_report(record).sections
        curve = f'<section id="curve"><h2>The curve and the budget</h2>{canvases(charts)}</section>\n'
        body = (
            f"<header><h1>memgauge fit <code>{esc(command)}</code></h1></header>\n<main>"
            f"{page_sections([first])}{curve}{page_sections(rest)}</main>"
        )
        return page(f"memgauge fit: {command}", body, finite({"kind": "sweep", "charts": charts}))
