"""The remedy table as JSON (plain figures, bytes and seconds) and as an HTML section (the report
document's, ``_section_remedies``), which the fit's page holds."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from memgauge.analysis import GpuPrediction, RemedyTable
from memgauge.render._document_report import page_sections
from memgauge.render._section_remedies import remedies_report


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
    """The table and its notes as a section of a page (the report document's), every text escaped."""
    return page_sections(remedies_report(table).sections)


class HtmlRemediesRenderer:
    def render(self, table: RemedyTable) -> str:
        return remedies_section(table)
