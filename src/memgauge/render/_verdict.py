"""The verdict of ``memgauge check`` (``gate.Verdict``), built once on the report document: a table
of the limits (limit, budget, measured, margin, status), then each limit's note and, for a breach,
the phase and the line responsible, then the verdict's one line (``gate.result_line``). The terminal
and Markdown renderers render it; CI logs are not terminals, so the terminal's has colour only where
asked. Strings from the profile (paths, source lines, phase names) are shown with control characters
escaped: they are the program's, not ours."""

from __future__ import annotations

from memgauge.analysis import short_path
from memgauge.gate import FAIL, CheckResult, Verdict, format_amount, result_line
from memgauge.render._document import Block, Column, Line, Section, Span, SpanTone, Table
from memgauge.render._document_report import Report, markdown_text, terminal_text, words
from memgauge.render._format import MISSING

_COLUMNS = (
    Column("limit", role="name", least=12),
    Column("budget"),
    Column("measured"),
    Column("margin"),
    Column("status", role="label"),
)
_STATUS = {FAIL: "FAIL"}  # a breach stands out in a log without colour; the others as recorded
Part = tuple[Span, ...]


def verdict_report(verdict: Verdict, cwd: str | None = None) -> Report:
    rows = tuple(_row(r) for r in verdict.results)
    # on a narrow terminal the margin goes first, then the budget: the status and the figure stay
    blocks: list[Block] = [Table("", _COLUMNS, rows, optional=("margin", "budget"))] if rows else []
    blocks += [line for r in verdict.results if (line := _remarks(r, cwd)) is not None]
    failed = verdict.failed or verdict.program_failed or verdict.unjudged
    tone: SpanTone = "bad" if failed else "good" if verdict.results else ""
    blocks.append(Line(((Span(result_line(verdict), tone),),)))
    return Report(None, (("verdict", Section("verdict", tuple(blocks))),))


class TerminalVerdictRenderer:
    def __init__(self, width: int = 100, color: bool = False, cwd: str | None = None) -> None:
        self.width = width
        self.color = color
        self.cwd = cwd

    def render(self, verdict: Verdict) -> str:
        return terminal_text(verdict_report(verdict, self.cwd), self.width, self.color)


class MarkdownVerdictRenderer:
    def __init__(self, cwd: str | None = None) -> None:
        self.cwd = cwd

    def render(self, verdict: Verdict) -> str:
        return markdown_text(verdict_report(verdict, self.cwd))


def _row(r: CheckResult) -> tuple[str, str, str, str, str]:
    unit = r.limit.unit
    measured = MISSING if r.measured is None else format_amount(r.measured, unit)
    margin = MISSING if r.margin is None else format_amount(r.margin, unit, signed=True)
    if r.at_least and r.measured is not None:
        # the run reached an enforced limit: its true figure is at least that, its room at most
        measured, margin = f"≥ {measured}", f"≤ {margin}"
    limit = ("≥ " if r.limit.lower else "") + format_amount(r.limit.value, unit)
    return (_plain(r.limit.key), limit, measured, margin, _STATUS.get(r.status, r.status))


def _remarks(r: CheckResult, cwd: str | None) -> Line | None:
    """What the table's row cannot hold, after the table under the limit's key: its note (the
    baseline's allowance and the change against it; why it was not measured) and, for a breach,
    where it came from; None where there is neither. Each remark is parts, where the line may
    break."""
    remarks: list[list[Part]] = []
    if r.baseline is not None:
        # "baseline 412 MiB + 10% (+7.3%)": the allowance, and where the run stands against it
        allowance = r.limit.text.partition(" <= ")[2] or f"baseline {format_amount(r.baseline, r.limit.unit)}"
        change = (
            f" ({(r.measured / r.baseline - 1) * 100:+.1f}%)" if r.measured is not None and r.baseline else ""
        )
        remarks.append(words(allowance + change))
    if r.note:
        remarks.append(words(_plain(r.note)))
    if r.status == FAIL and r.blame is not None:
        blame = _blame(r, cwd)
        if blame:
            remarks.append([(Span("at "), *blame[0]), *blame[1:]])
    if not remarks:
        return None
    # the remarks separated by " ·", the separator in no tone of its own; the key leads
    parts: list[Part] = []
    for i, remark in enumerate(remarks):
        last = i == len(remarks) - 1
        parts += remark if last else [*remark[:-1], (*remark[-1], Span(" ·"))]
    parts[0] = (Span(f"{_plain(r.limit.key)}: "), *parts[0])
    return Line(tuple(parts), lead="  ", indent="    ", item=True)


def _blame(r: CheckResult, cwd: str | None) -> list[Part]:
    """The phase, the process, the line, what it held at the peak and its source: each a part, all
    but the last ending in " ·"."""
    b = r.blame
    assert b is not None
    parts: list[Part] = []
    if b.phase is not None:
        parts.append((Span(f"phase '{_plain(b.phase)}'"),))
    if b.pid is not None:
        parts.append((Span(f"pid {b.pid}"),))
    if b.file is not None:
        path = _plain(short_path(b.file, cwd))
        where = f"{path}:{b.line}" if b.line else path
        function = (Span(f" in {_plain(b.function)}"),) if b.function else ()
        parts.append((Span(where, "code"), *function))
    if b.bytes is not None:
        parts.append((Span(f"{format_amount(b.bytes, 'bytes')} at the peak"),))
    if b.seconds is not None:
        parts.append((Span(f"{format_amount(b.seconds, 'seconds')} sampled"),))
    if b.source:
        parts.append((Span(_plain(b.source.strip()), "code"),))
    return [(*part, Span(" ·")) for part in parts[:-1]] + parts[-1:]


def _plain(text: str) -> str:
    """``text`` with control characters escaped: a source line or path from the profile must not
    move the cursor or colour a CI log."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
