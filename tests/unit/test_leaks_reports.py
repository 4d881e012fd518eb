"""The Markdown and HTML reports show what a run still held at exit, by line, and the leak note,
as the terminal report does (issue 16, part 3)."""

from __future__ import annotations

import re

from memgauge._units import format_bytes
from memgauge.model import HeldLine, Profile
from memgauge.render import HtmlRenderer, MarkdownRenderer, TerminalRenderer
from tests.factories import make_profile

MIB = 1 << 20
NOTE = "too short to judge growth: lines sampled for 0.31 s, under the 0.5 s a leak needs"


def _profile(held: bool = True, note: str = NOTE) -> Profile:
    p = make_profile(wall=0.4, rss=420 * MIB, peaks={7: 420 * MIB})
    if held:
        p.held_at_exit = [
            HeldLine(7, "/proj/short.py", 8, "<module>", 391 * MIB, "kept.append(bytearray(2 * MIB))"),
            HeldLine(7, "/proj/short.py", 12, "<module>", 9 * MIB, "print(len(kept))"),
        ]
    p.leak_note = note
    return p


def test_markdown_lists_the_lines_held_at_exit_and_the_note() -> None:
    out = MarkdownRenderer(cwd="/proj").render(_profile())
    assert "still held at exit (sampled)" in out
    rows = [line for line in out.splitlines() if "short.py:" in line]
    assert "391 MiB" in rows[0] and "short.py:8" in rows[0] and "kept.append" in rows[0], rows
    assert f"| {format_bytes(9 * MIB)} | `short.py:12`" in rows[1], rows
    assert f"note: {NOTE}" in out


def test_html_has_a_section_for_them_in_its_navigation() -> None:
    out = HtmlRenderer(cwd="/proj").render(_profile())
    assert re.search(r'<a href="#exit">held at exit</a>', out), "no navigation entry"
    section = out[out.index('id="exit"') :]
    assert "short.py:8" in section and "391 MiB" in section
    assert f"note: {NOTE}" in section


def test_the_three_reports_say_the_same() -> None:
    p = _profile()
    terminal = TerminalRenderer(width=120).render(p)
    for out in (terminal, MarkdownRenderer(cwd="/proj").render(p), HtmlRenderer(cwd="/proj").render(p)):
        assert "still held at exit (sampled)" in out and "391 MiB" in out and NOTE in out


def test_a_profile_without_them_shows_no_section() -> None:
    p = _profile(held=False, note="")
    assert "held at exit" not in MarkdownRenderer().render(p)
    assert 'id="exit"' not in HtmlRenderer().render(p)
    only_note = _profile(held=False)
    assert "still held at exit" not in MarkdownRenderer().render(only_note)
    assert f"note: {NOTE}" in MarkdownRenderer().render(only_note)
