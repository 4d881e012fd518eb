"""The reports of ``memgauge plan``: terminal, markdown, HTML and JSON (the record itself). The
first three render one report document (``plan_report``): the headline, the statements and the
two tables (the programs, the runs that verified the plan)."""

from __future__ import annotations

import json

from memgauge.model import PlanRecord, PlanRun
from memgauge.render._document import Column, Heading, Section, Table
from memgauge.render._document_report import Report, markdown_text, page_sections, sentence, terminal_text
from memgauge.render._format import DASH, MISSING, esc, format_figure, percent
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


_MEMBER_COLUMNS = (
    Column("program", role="name", most=40),
    Column("needs"),
    Column("peak at"),
    Column("runs for"),
    Column("every"),
    Column("from", role="path"),
)
_RUN_COLUMNS = (
    Column("run", role="name", most=24),
    Column("copies"),
    Column("offsets", role="label"),
    Column("plan says"),
    Column("outcome", role="words"),
    Column("group peak"),
    Column("limit hit"),
    Column("slowdown"),
)


def _member_rows(record: PlanRecord) -> tuple[tuple[str, ...], ...]:
    return tuple(
        (
            m.name,
            _b(m.need_bytes),
            _s(m.peak_at_seconds),
            _s(m.duration_seconds),
            _s(m.period_seconds) if m.period_seconds else MISSING,
            m.source,
        )
        for m in record.members
    )


def _runs(record: PlanRecord) -> list[PlanRun]:
    runs = list(record.runs)
    m = record.max_copies
    if m is not None:
        runs += [r for r in (m.proof, m.refutation) if r is not None]
    return runs


def _run_rows(record: PlanRecord) -> tuple[tuple[str, ...], ...]:
    return tuple(
        (
            r.label,
            str(r.copies),
            _offsets(r.offsets_seconds) if len(r.offsets_seconds) <= 6 else f"{r.copies} offsets",
            _b(r.predicted_bytes),
            r.outcome,
            _b(r.peak_bytes),
            str(r.limit_hits),
            MISSING if r.slowdown is None else f"{r.slowdown:.2f}x",
        )
        for r in _runs(record)
    )


def plan_report(record: PlanRecord) -> Report:
    statements = tuple(sentence(s, item=True) for s in _statements(record))
    members = Table("", _MEMBER_COLUMNS, _member_rows(record), optional=("every", "runs for", "peak at"))
    sections = [("answer", Section("The answer", statements)), ("members", Section("Programs", (members,)))]
    if _runs(record):
        title = f"verified together under {_b(record.machine_bytes)}, caches cold"
        optional = ("offsets", "slowdown", "limit hit", "plan says")
        runs = Table(title, _RUN_COLUMNS, _run_rows(record), optional=optional)
        sections.append(("runs", Section(title, (runs,))))
    return Report(Heading(headline(record), level=3), tuple(sections))


class TerminalPlanRenderer:
    def __init__(self, width: int = 100, color: bool = False) -> None:
        self.width = width
        self.color = color

    def render(self, record: PlanRecord) -> str:
        return terminal_text(plan_report(record), self.width, self.color)


class MarkdownPlanRenderer:
    def render(self, record: PlanRecord) -> str:
        return markdown_text(plan_report(record))


class JsonPlanRenderer:
    def render(self, record: PlanRecord) -> str:
        return json.dumps(finite(record.to_dict()), indent=2) + "\n"


class HtmlPlanRenderer:
    def render(self, record: PlanRecord) -> str:
        # the headline, the text reports' title, is the page's
        body = (
            f"<header><h1>{esc(headline(record))}</h1></header>\n"
            f"<main>{page_sections(plan_report(record).sections)}</main>"
        )
        return page("memgauge plan", body, {"kind": "sweep", "charts": []})
