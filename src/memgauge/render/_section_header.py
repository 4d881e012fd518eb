"""The run report's header, built once on the report document: the command, how it ended and its
times, the memory headline (what a container needs, how it was found and how it reconciles with
the resident peak and the max RSS users compare it with; or, for a profile without it, the
resident peak) and the memory over time. The terminal and the Markdown report render it; the page
shows the same figures as cards (``summary_cards``), with the command in its title."""

from __future__ import annotations

import re
import shlex

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import exit_text
from memgauge.render._document import (
    Block,
    Card,
    Cards,
    Heading,
    Items,
    Line,
    Paragraph,
    Section,
    Span,
    SpanTone,
    Sparkline,
)
from memgauge.render._format import core_share, peak_bound
from memgauge.render._text import needs_lines, peak_note

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.model import Profile

Part = tuple[Span, ...]

# where a line of the need's composition may break: after a comma, a colon or a dot, so that a
# figure keeps its unit
_BREAK = re.compile(r"(?<=[,:·]) ")


def header_section(p: Profile) -> Section:
    blocks: list[Block] = [Heading("memgauge", code=shlex.join(p.command), level=3), _times(p)]
    needs = needs_lines(p)
    if needs is not None:
        head = (Span("container needs ", "strong"), Span(needs[0].removeprefix("container needs "), "figure"))
        blocks.append(Line((head, (Span(needs[1]),))))
        for row in needs[2]:
            parts = tuple((Span(part, "dim"),) for part in _BREAK.split(row))
            blocks.append(Line(parts, lead="  ", indent="    ", item=True))
    else:
        blocks += _resident_peak(p)
    series = p.timeline.cgroup_bytes or p.timeline.tree_resident_bytes
    if series:
        tail = f"0 to {format_bytes(max(series))} over {format_seconds(p.wall_seconds)}"
        blocks.append(Sparkline("memory", tuple(series), tail))
    return Section("", tuple(blocks))


def _times(p: Profile) -> Line:
    words, tone = exit_text(p)
    exit_tone: SpanTone = "good" if tone == "good" else "bad" if tone == "bad" else ""
    parts: list[Part] = [
        (Span(words, exit_tone),),
        (Span(f"wall {format_seconds(p.wall_seconds)}"),),
        (Span(f"user {format_seconds(p.cpu.user_seconds)}"),),
        (Span(f"system {format_seconds(p.cpu.system_seconds)}"),),
    ]
    if p.wall_seconds > 0:
        parts.append((Span(f"CPU {core_share(p)}"),))
    # the separator in no tone of its own, not in the exit status's
    separated = [(*part, Span(" ·")) for part in parts[:-1]]
    return Line((*separated, parts[-1]))


def _resident_peak(p: Profile) -> list[Block]:
    """The resident peak, its bound and when; then how it was measured (dim, its own line in the
    terminal)."""
    peak = p.peak
    head = (Span("resident peak ", "strong"), Span(format_bytes(peak.resident_bytes), "figure"))
    parts: list[Part] = [head, (Span(peak_note(p)),)]
    if peak.at_seconds is not None:
        parts.append((Span(f"at {format_seconds(peak.at_seconds)}"),))
    how = [f"by {peak.method}"]
    if peak.includes_page_cache:
        how[-1] += ","
        how.append("page cache included")
    if len(p.processes) > 1 or peak.includes_page_cache:
        how[-1] += ";"
        how.append(f"largest process {format_bytes(peak.largest_process_bytes)}")
    measured = Line(tuple((Span(text, "dim"),) for text in how), lead="  ", joined=True)
    return [Line(tuple(parts)), measured]


def summary_cards(p: Profile) -> Section:
    """The page's opening: its figures in boxes (what a container needs first, where the profile
    has it), then how the peak was found or the lines that reconcile the need, and the peak's
    notes."""
    words, cls = exit_text(p)
    cpu = p.cpu.user_seconds + p.cpu.system_seconds
    entries = [
        Card("resident peak", format_bytes(p.peak.resident_bytes), peak_bound(p), "peak"),
        Card("wall time", format_seconds(p.wall_seconds), words, cls),
        Card("CPU time", format_seconds(cpu), core_share(p)),
    ]
    if p.allocation_peak is not None:
        entries.append(Card("allocation peak", format_bytes(p.allocation_peak.bytes), "live heap (memray)"))
    if len(p.processes) > 1:
        largest = format_bytes(p.peak.largest_process_bytes)
        entries.append(Card("largest process", largest, f"of {len(p.processes)} processes"))
    needs = needs_lines(p)
    if needs is not None:
        # the headline first; the lines under it reconcile it with the other figures
        entries.insert(
            0, Card("container needs", needs[0].removeprefix("container needs "), needs[1], "peak")
        )
        return Section("", (Cards(tuple(entries)), Items((*needs[2], *p.peak.notes))))
    how = f"measured by {p.peak.method}"
    if p.peak.includes_page_cache:
        how += ", page cache included"
    if p.peak.at_seconds is not None:
        how += f"; reached at {format_seconds(p.peak.at_seconds)}"
    return Section("", (Cards(tuple(entries)), Paragraph(how, "dim"), Items(tuple(p.peak.notes))))
