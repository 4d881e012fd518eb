"""The remedy table as JSON (plain figures, bytes and seconds) and as an HTML table (a section a
page can hold, or the whole page for ``--remedies`` alone)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from memgauge.analysis import GpuPrediction, RemedyTable
from memgauge.render._format import esc
from memgauge.render._remedies_cells import HEADERS, cells, footnotes
from memgauge.render._remedies_text import TITLE


def remedies_json(table: RemedyTable) -> dict[str, Any]:
    """The table as plain data: each row's fields (``analysis.RemedyRow``) in bytes and seconds."""
    return {
        "budget_bytes": table.budget_bytes,
        "law": table.law,
        "rows": [dataclasses.asdict(row) for row in table.rows],
    }


def prediction_json(prediction: GpuPrediction) -> dict[str, Any]:
    """The prediction as plain data (``analysis.GpuPrediction``'s fields, bytes)."""
    return dataclasses.asdict(prediction)


class JsonRemediesRenderer:
    def render(self, table: RemedyTable) -> str:
        return json.dumps(remedies_json(table), indent=2, allow_nan=False) + "\n"


def remedies_section(table: RemedyTable) -> str:
    """The table and its notes as an HTML fragment, every text escaped."""
    head = "".join(f"<th>{esc(h)}</th>" for h in HEADERS)
    rows = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in cells(row)) + "</tr>" for row in table.rows)
    notes = "".join(f"<li>{esc(note)}</li>" for note in footnotes(table))
    return (
        f'<section id="remedies"><h2>{esc(TITLE)}</h2>'
        f'<table class="remedies"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'
        f"<ul>{notes}</ul></section>"
    )


class HtmlRemediesRenderer:
    def render(self, table: RemedyTable) -> str:
        return remedies_section(table)
