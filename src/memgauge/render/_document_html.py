"""The report document on the HTML page: a section under its heading and note, a table under its
title (a sub-heading, unless it repeats the section's heading), paragraphs classed by tone, notes
as a list, a chart as its canvas."""

from __future__ import annotations

from memgauge.render._document import Chart, Items, Paragraph, Section, Table
from memgauge.render._format import esc
from memgauge.render._html_page import Part, code, items, table, text


def _id(anchor: str) -> str:
    return f' id="{esc(anchor)}"' if anchor else ""


_CLASS = {"": "", "strong": "", "bad": "bad", "warn": "bad", "dim": "note"}


def section_part(section: Section) -> Part:
    parts: list[str] = []
    for block in section.blocks:
        if isinstance(block, Table):
            if block.title and block.title != section.heading:
                parts.append(f"<h3{_id(block.anchor)}>{esc(block.title)}</h3>")
            headers = [(c.header, c.role == "figure") for c in block.columns]
            cell = [code if c.code else text for c in block.columns]
            depths = block.depths or (0,) * len(block.rows)
            # a nested row's first cell indented by non-breaking spaces, which HTML keeps
            nested = [
                (("\u00a0\u00a0" * d + r[0], *r[1:]) if r else r)
                for r, d in zip(block.rows, depths, strict=True)
            ]
            rows = [[f(v) for f, v in zip(cell, row, strict=True)] for row in nested]
            parts.append(table(headers, rows, cls=block.cls))
        elif isinstance(block, Paragraph):
            cls = f' class="{_CLASS[block.tone]}"' if _CLASS[block.tone] else ""
            parts.append(f"<p{cls}{_id(block.anchor)}>{esc(block.text)}</p>")
        elif isinstance(block, Items):
            parts.append(items(block.texts))
        elif isinstance(block, Chart):
            parts.append(f'<div class="chart"><canvas id="{esc(block.id)}"></canvas></div>')
        else:
            raise TypeError(f"no HTML form for {block!r}")
    return Part("".join(parts), section.heading, esc(section.note))
