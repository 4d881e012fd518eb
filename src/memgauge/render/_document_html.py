"""The report document on the HTML page: a section under its heading and note, a table under its
title and a heading as a sub-heading (either left out where it repeats the section's heading),
paragraphs and lines of figures classed by tone, notes as a list, a piece of advice as its box
with its figures' table, a chart as its canvas (a sparkline, the text reports' chart, as text),
charts in a grid each under its title, figures in boxes, names with their values as a list."""

from __future__ import annotations

from memgauge.analysis import sparkline
from memgauge.render._document import (
    Block,
    Breaks,
    Cards,
    Change,
    Chart,
    Charts,
    Column,
    Compared,
    Finding,
    Heading,
    Items,
    Line,
    Named,
    Notes,
    Only,
    Paragraph,
    Runs,
    Section,
    Span,
    Sparkline,
    Sums,
    Table,
)
from memgauge.render._document_forms import CellForm, Heat, Indent, Split, Stack
from memgauge.render._document_views import shown_in
from memgauge.render._format import esc
from memgauge.render._html_page import Cell, Part, cards, code, items, table, text


def _id(anchor: str) -> str:
    return f' id="{esc(anchor)}"' if anchor else ""


_CLASS = {"": "", "strong": "", "bad": "bad", "warn": "bad", "dim": "note"}


def section_part(section: Section) -> Part:
    parts: list[str] = []
    for block in section.blocks:
        if isinstance(block, Table):
            if block.title and block.title != section.heading:
                parts.append(f"<h3{_id(block.anchor)}>{esc(block.title)}</h3>")
            parts.append(_table(block))
        elif isinstance(block, Heading):
            parts.append("" if block.text == section.heading else _heading(block))
        elif isinstance(block, Only):
            inner = Section(section.heading, block.blocks)
            parts.append(section_part(inner).content if "html" in block.formats else "")
        else:
            parts.append(_form(block))
    return Part("".join(parts), section.heading, esc(section.note))


def _form(block: Block) -> str:
    if isinstance(block, Line):
        spans = (" ".join(_span(s) for s in part) for part in block.parts)
        return f"<p>{' '.join(spans)}</p>"
    if isinstance(block, Sparkline):
        drawn = sparkline(list(block.values), width=60)
        return f'<p class="note">{esc(block.label)} <code>{esc(drawn)}</code> {esc(block.tail)}</p>'
    if isinstance(block, Paragraph):
        cls = f' class="{_CLASS[block.tone]}"' if _CLASS[block.tone] else ""
        return f"<p{cls}{_id(block.anchor)}>{esc(block.text)}</p>"
    if isinstance(block, Items):
        return items(block.texts)
    if isinstance(block, Finding):
        return _finding(block)
    if isinstance(block, Chart):
        return f'<div class="chart"><canvas id="{esc(block.id)}"></canvas></div>'
    if isinstance(block, Compared | Runs | Breaks):
        return _compare_form(block)
    if isinstance(block, Sums | Notes):
        return _profile_form(block)
    if isinstance(block, Charts | Cards | Named):
        return _page_form(block)
    raise TypeError(f"no HTML form for {block!r}")


def _heading(heading: Heading) -> str:
    code = "" if heading.code is None else f" <code>{esc(heading.code)}</code>"
    return f"<h3>{esc(heading.text)}{code}</h3>"


def _span(span: Span) -> str:
    if span.tone == "code":
        return f"<code>{esc(span.text)}</code>"
    if span.tone in ("strong", "figure"):
        return f"<strong>{esc(span.text)}</strong>"
    cls = {"good": "good", "bad": "bad", "dim": "note"}.get(span.tone)
    return f'<span class="{cls}">{esc(span.text)}</span>' if cls else esc(span.text)


def _table(block: Table) -> str:
    block = shown_in(block, "html")
    headers = [(c.header, c.role == "figure") for c in block.columns]
    depths = block.depths or (0,) * len(block.rows)
    rows = _page_rows(block, depths) if block.cells else _rows(block, depths)
    if block.drop_empty:
        keep = [i for i in range(len(headers)) if any(row[i].html for row in rows)]
        headers = [headers[i] for i in keep]
        rows = [[row[i] for i in keep] for row in rows]
    return table(headers, rows, cls=block.cls)


def _rows(block: Table, depths: tuple[int, ...]) -> list[list[Cell]]:
    rows = []
    for row, depth in zip(block.rows, depths, strict=True):
        # a nested row's first cell indented by non-breaking spaces, which HTML keeps
        cells = ("\u00a0\u00a0" * depth + row[0], *row[1:]) if row else row
        rows.append([_cell(c, v) for c, v in zip(block.columns, cells, strict=True)])
    for shown, forms in zip(rows, block.forms, strict=False):
        shown[:] = [_formed(cell, form) for cell, form in zip(shown, forms, strict=True)]
    for shown, tones in zip(rows, block.tones, strict=False):
        shown[:] = [_toned(cell, tone) for cell, tone in zip(shown, tones, strict=True)]
    for shown, keys in zip(rows, block.sorts, strict=False):
        shown[:] = [Cell(cell.html, key) for cell, key in zip(shown, keys, strict=True)]
    return rows


def _page_rows(block: Table, depths: tuple[int, ...]) -> list[list[Cell]]:
    """Each cell as the page words it (its parts, each toned), sorted by its key or by what it
    shows; a nested row's first cell indented."""
    rows = []
    for row, keys, depth in zip(block.cells, block.sorts, depths, strict=True):
        shown = []
        for i, (column, cell, key) in enumerate(zip(block.columns, row, keys, strict=True)):
            parts = cell.page or ((cell.text, cell.tone),)
            if i == 0 and depth:
                parts = (("\u00a0\u00a0" * depth + parts[0][0], parts[0][1]), *parts[1:])
            html = "".join(_toned(_cell(column, words), tone).html for words, tone in parts)
            shown.append(_formed(Cell(html, key), cell.form))
        rows.append(shown)
    return rows


def _cell(column: Column, value: str) -> Cell:
    # a missing value in a code column (its ``absent``) is words, not code
    return code(value) if column.code and not (column.absent and value == column.absent) else text(value)


def _finding(finding: Finding) -> str:
    figures = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in finding.figures)
    where = f" <code>{esc(finding.where)}</code>" if finding.where else ""
    return (
        f'<div class="advice" data-kind="{esc(finding.kind)}"><h3>{esc(finding.title)}{where}</h3>'
        f'<table class="evidence">{figures}</table><p>{esc(finding.detail)}</p></div>'
    )


# a cell's tone on the page: bold, the stylesheet's class, or both; an outcome with nothing wrong
# in a plain span
_CELL = {
    "strong": "<b>{}</b>",
    "figure": "<b>{}</b>",
    "good": '<span class="good">{}</span>',
    "bad": '<span class="bad">{}</span>',
    "warn": '<span class="bad">{}</span>',
    "dim": '<span class="na">{}</span>',
    "alarm": '<b class="bad">{}</b>',
    "ok": "<span>{}</span>",
}


def _toned(cell: Cell, tone: str) -> Cell:
    mark = _CELL.get(tone)
    if mark is None or not cell.html:
        return cell
    return Cell(mark.format(cell.html), cell.sort)


# -- the page's own blocks -----------------------------------------------------------------------

# the charts side by side, each at least 460 pixels wide
_GRID = (
    '<div class="charts" style="display:grid;grid-template-columns:repeat(auto-fill,minmax(460px,1fr));'
    'gap:4px 24px">'
)


def _page_form(block: Charts | Cards | Named) -> str:
    if isinstance(block, Charts):
        if not block.charts:
            return ""
        figures = (
            f'<figure style="margin:0"><h3>{esc(c.title)}</h3>'
            f'<div class="chart{" tall" if c.tall else ""}"><canvas id="{esc(c.id)}"></canvas></div></figure>'
            for c in block.charts
        )
        return _GRID + "".join(figures) + "</div>"
    if isinstance(block, Cards):
        return f'<div class="cards">{cards([(c.label, c.value, c.sub, c.cls) for c in block.cards])}</div>'
    pairs = "".join(f"<li><code>{esc(name)}</code>: {esc(value)}</li>" for name, value in block.pairs)
    return f"<ul>{pairs}</ul>" if pairs else ""


# -- the comparison's blocks ---------------------------------------------------------------------


def _compare_form(block: Compared | Runs | Breaks) -> str:
    if isinstance(block, Compared):
        return _compared(block)
    if isinstance(block, Runs):
        # a column per run: the runs' commands are long, their names short
        headers = [("", False)] + [(name, False) for name in block.names]
        commands = [text("command"), *(code(command) for command in block.commands)]
        return table(headers, [commands, [text("exit"), *(text(ended) for ended, _ in block.exits)]])
    return items(block.texts)


def _compared(block: Compared) -> str:
    """A column per run, each later run's change under its figure; the texts' columns, or the
    row's one label (indented to its depth)."""
    texts = [("", False)] if block.labels else [(c.header, False) for c in block.columns]
    depths = block.depths or (0,) * len(block.rows)
    rows = []
    for i, ((row, figures), depth) in enumerate(zip(block.rows, depths, strict=True)):
        if block.labels:
            label, sort = block.labels[i]
            indent = f'<span class="indent" style="--depth:{depth}"></span>'
            named = [Cell(indent + esc(label), sort)]
        else:
            named = [_cell(c, v) for c, v in zip(block.columns, row, strict=True)]
        rows.append(named + [_change(f) for f in figures])
    return table(texts + [(name, True) for name in block.runs], rows)


def _change(f: Change) -> Cell:
    if f.delta is None:
        return Cell(esc(f.value), f.sort)
    change = f.delta + ("" if f.ratio is None else f" · {f.ratio}")
    return Cell(f'{esc(f.value)}<br><small class="{f.tone}">{esc(change)}</small>', f.sort)


# -- the profile report's blocks -----------------------------------------------------------------


def _profile_form(block: Sums | Notes) -> str:
    if isinstance(block, Notes):
        return items(block.texts)
    return "".join(
        '<p class="reconcile">'
        + " ".join("".join(_sum_span(span) for span in term) for term in one.terms)
        + "</p>"
        + items(one.notes)
        for one in block.sums
    )


def _sum_span(span: Span) -> str:
    return f"<b>{esc(span.text)}</b>" if span.tone == "figure" else esc(span.text)


# -- the page's cell forms -----------------------------------------------------------------------


def _formed(cell: Cell, form: CellForm | None) -> Cell:
    if isinstance(form, Heat):
        top, value = form.top, form.value
        width = 0.0 if top <= 0 else max(0.0, min(1.0, abs(value) / top)) * 100
        kind = "heat neg" if form.negative else "heat"
        return Cell(
            f'<div class="{kind}"><span style="width:{width:.1f}%"></span><em>{cell.html}</em></div>',
            cell.sort,
        )
    if isinstance(form, Split):
        return Cell(_split(form, cell.html), cell.sort)
    if isinstance(form, Stack):
        frames = "".join(f"<li><code>{esc(frame)}</code></li>" for frame in form.frames)
        return Cell(
            f"<details><summary>{cell.html}</summary><ol class=stack>{frames}</ol></details>", cell.sort
        )
    if isinstance(form, Indent):
        remark = f' <em class="bad">{esc(form.remark)}</em>' if form.remark else ""
        return Cell(
            f'<span class="indent" style="--depth:{form.depth}"></span>{cell.html}{remark}', cell.sort
        )
    return cell


def _split(form: Split, label: str) -> str:
    """One bar of a line's time: Python, native (C code, GIL released or not), queued for a CPU
    (contention: a busy machine) and waiting; nothing for no time."""
    parts = (
        ("py", "Python", form.python),
        ("nat", "native", form.native),
        ("cont", "CPU contention", form.contention),
        ("wait", "waiting", form.wait),
    )
    total = form.python + form.native + form.wait + form.contention  # the page's order of old
    if total <= 0:
        return ""
    bars = "".join(
        f'<span class="{cls}" style="width:{v / total * 100:.1f}%" title="{name} {v / total:.0%}"></span>'
        for cls, name, v in parts
        if v > 0
    )
    return f'<div class="split">{bars}</div><small>{label}</small>'
