"""The reports of ``memgauge plan``: terminal, markdown, HTML and JSON (the record itself). Every
format shows the same statements (``_statements``) and the same two tables (members, runs)."""

from __future__ import annotations

import json

from memgauge.model import PlanRecord, PlanRun
from memgauge.render._format import DASH, MISSING, esc, format_figure, md_table, percent
from memgauge.render._html_page import page
from memgauge.render._sweep_json import finite

__all__ = ["HtmlPlanRenderer", "JsonPlanRenderer", "MarkdownPlanRenderer", "TerminalPlanRenderer"]


def _b(n: float | None) -> str:
    return format_figure(n, "bytes")


def _s(n: float | None) -> str:
    return format_figure(n, "seconds")


def _offsets(offsets: list[float]) -> str:
    return ", ".join(f"{o:g}" for o in offsets) + " s"


def headline(record: PlanRecord) -> str:
    n = len(record.members)
    what = f"{n} program{'s' if n != 1 else ''} on {_b(record.machine_bytes)}, {record.machine_cores} cores"
    rule = {"worst": "the worst case", "p99": "the 99th percentile", "p99.9": "the 99.9th percentile"}
    verdict = "fit" if record.fits else "do NOT fit"
    return f"memgauge plan: {what}: they {verdict} by {rule[record.rule]} ({_b(record.figure_bytes)})"


def _statements(record: PlanRecord) -> list[str]:
    kernel = record.members[0].kernel_bytes if record.members else 0
    out = [
        f"worst case, every need at once plus the kernel's {_b(kernel)} per group: {_b(record.worst_bytes)}",
        f"at the given offsets ({_offsets(record.offsets_seconds)}): {_b(record.given_bytes)}; "
        f"with every peak aligned: {_b(record.aligned_bytes)}",
    ]
    d = record.distribution
    if d is not None:
        out.append(
            f"random offsets ({d.trials:,} trials, starts within {_s(d.window_seconds)}, grid "
            f"{_s(d.grid_seconds)}): p50 {_b(d.p50_bytes)}, p99 {_b(d.p99_bytes)}, "
            f"p99.9 {_b(d.p999_bytes)}, max {_b(d.max_bytes)}"
        )
        out.append(
            f"P(over {_b(record.machine_bytes)}) = {percent(d.exceed_probability)} "
            f"({d.exceed_count:,} of {d.trials:,} trials; 95% interval "
            f"{percent(d.exceed_low)}{DASH}{percent(d.exceed_high)})"
        )
    m = record.max_copies
    if m is not None:
        text = (
            f"max copies by {m.rule}: {m.copies} ({_b(m.figure_bytes)}; "
            f"{m.copies + 1}: {_b(m.next_figure_bytes)})"
        )
        if m.proof is not None and m.refutation is not None:
            state = "proven" if m.proven else "NOT proven"
            text += (
                f"; {state}: {m.copies} copies {m.proof.outcome}, {m.copies + 1} "
                f"{m.refutation.outcome} (limit hit {m.refutation.limit_hits} times)"
            )
        out.append(text)
    out.extend(record.notes)
    return out


_MEMBER_HEADERS = ["program", "needs", "peak at", "runs for", "every", "from"]
_RUN_HEADERS = ["run", "copies", "offsets", "plan says", "outcome", "group peak", "limit hit", "slowdown"]


def _member_rows(record: PlanRecord) -> list[list[str]]:
    return [
        [
            m.name,
            _b(m.need_bytes),
            _s(m.peak_at_seconds),
            _s(m.duration_seconds),
            _s(m.period_seconds) if m.period_seconds else MISSING,
            m.source,
        ]
        for m in record.members
    ]


def _runs(record: PlanRecord) -> list[PlanRun]:
    runs = list(record.runs)
    m = record.max_copies
    if m is not None:
        runs += [r for r in (m.proof, m.refutation) if r is not None]
    return runs


def _run_rows(record: PlanRecord) -> list[list[str]]:
    return [
        [
            r.label,
            str(r.copies),
            _offsets(r.offsets_seconds) if len(r.offsets_seconds) <= 6 else f"{r.copies} offsets",
            _b(r.predicted_bytes),
            r.outcome,
            _b(r.peak_bytes),
            str(r.limit_hits),
            MISSING if r.slowdown is None else f"{r.slowdown:.2f}x",
        ]
        for r in _runs(record)
    ]


def _text_table(headers: list[str], rows: list[list[str]], width: int) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = []
    for cells in [headers, *rows]:
        line = "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()
        lines.append(line if len(line) <= width else line[: width - 1] + "…")
    return lines


class TerminalPlanRenderer:
    def __init__(self, width: int = 100, color: bool = False) -> None:
        self.width = width
        self.color = color

    def render(self, record: PlanRecord) -> str:
        lines = [headline(record), *_statements(record), ""]
        lines += _text_table(_MEMBER_HEADERS, _member_rows(record), self.width)
        if _runs(record):
            lines += ["", f"verified together under {_b(record.machine_bytes)}, caches cold:"]
            lines += _text_table(_RUN_HEADERS, _run_rows(record), self.width)
        return "\n".join(lines) + "\n"


class MarkdownPlanRenderer:
    def render(self, record: PlanRecord) -> str:
        lines = [f"## {headline(record)}", "", *(f"- {s}" for s in _statements(record)), ""]
        lines += md_table(_MEMBER_HEADERS, ["l", "r", "r", "r", "r", "l"], _member_rows(record))
        if _runs(record):
            lines += ["", f"Verified together under {_b(record.machine_bytes)}, caches cold:", ""]
            lines += md_table(_RUN_HEADERS, ["l", "r", "l", "r", "l", "r", "r", "r"], _run_rows(record))
        return "\n".join(lines) + "\n"


class JsonPlanRenderer:
    def render(self, record: PlanRecord) -> str:
        return json.dumps(finite(record.to_dict()), indent=2) + "\n"


def _html_table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


class HtmlPlanRenderer:
    def render(self, record: PlanRecord) -> str:
        items = "".join(f"<li>{esc(s)}</li>" for s in _statements(record))
        body = (
            f"<header><h1>{esc(headline(record))}</h1></header>\n<main>"
            f'<section id="answer"><h2>The answer</h2><ul class="notes">{items}</ul></section>'
            f'<section id="members"><h2>Programs</h2>'
            f"{_html_table(_MEMBER_HEADERS, _member_rows(record))}</section>"
        )
        if _runs(record):
            body += (
                f'<section id="runs"><h2>Verified together under {esc(_b(record.machine_bytes))}, caches '
                f"cold</h2>{_html_table(_RUN_HEADERS, _run_rows(record))}</section>"
            )
        body += "</main>"
        return page("memgauge plan", body, {"kind": "sweep", "charts": []})
