"""The markdown report's own rules: tables that stay tables whatever the source lines hold."""

from __future__ import annotations

import dataclasses
import re

import pytest

from memgauge.model._profile import UNBOUNDED_NOTE, Attribution, ExitStatus, LineStats, Profile
from memgauge.render import MarkdownRenderer
from tests.unit.test_golden import FAKE_CWD, MIB, TRAIN, minimal_profile, rich_profile

markdown_it = pytest.importorskip("markdown_it")  # rich's own dependency: always there with memgauge

# a cell ends at a '|' that no backslash escapes, as in GFM
_CELL_SPLIT = re.compile(r"(?<!\\)\|")

AWKWARD_SOURCES = [
    "flags = a | b",
    "x = `y`",
    "s = '``' + '`'",
    "`starts and ends`",
    "pattern = re.compile(r'\\|')",
    "path = 'C:\\\\'",
    "a || b | c",
    "<b>not html</b> & *not emphasis* _nor_ [a link](x)",
]


def _render(profile: Profile, **kw: int) -> str:
    return MarkdownRenderer(cwd=FAKE_CWD, **kw).render(profile)


def _tables(text: str) -> list[list[str]]:
    """The raw rows of each table: runs of lines starting with '|'."""
    tables: list[list[str]] = []
    current: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    return tables


def _cells(row: str) -> list[str]:
    assert row.startswith("| ") and row.endswith(" |"), row
    return [c.strip() for c in _CELL_SPLIT.split(row[1:-1])]


def _html_tables(text: str) -> list[list[tuple[int, list[str]]]]:
    """Each table as a GFM parser reads it: per row, its number of cells and the text of its code
    spans."""
    tables: list[list[tuple[int, list[str]]]] = []
    cells, codes = 0, []
    for tok in markdown_it.MarkdownIt("gfm-like").parse(text):
        if tok.type == "table_open":
            tables.append([])
        elif tok.type == "tr_open":
            cells, codes = 0, []
        elif tok.type in ("th_open", "td_open"):
            cells += 1
        elif tok.type == "inline" and tok.children:
            codes += [c.content for c in tok.children if c.type == "code_inline"]
        elif tok.type == "tr_close":
            tables[-1].append((cells, codes))
    return tables


def _with_sources(sources: list[str]) -> Profile:
    base = rich_profile()
    attribution = [
        Attribution(100, TRAIN, 200 + i, "main", (len(sources) - i) * MIB, source=s)
        for i, s in enumerate(sources)
    ]
    return dataclasses.replace(base, peak=dataclasses.replace(base.peak, attribution=attribution))


def test_a_pipe_in_a_source_line_adds_no_column() -> None:
    text = _render(rich_profile())
    rows = [line for line in text.splitlines() if "load(path)" in line]
    assert len(rows) == 3  # held by, allocation peak, CPU time by line
    for table in _tables(text):
        width = len(_cells(table[0]))
        for row in table:
            if "load(path)" in row:
                assert len(_cells(row)) == width, row
                assert _cells(row)[-1] == "`` table = load(path) \\| cache  # see `load` ``"


def test_every_row_has_as_many_cells_as_the_header() -> None:
    text = _render(rich_profile())
    tables = _tables(text)
    assert len(tables) == 8
    for table in tables:
        header, separator, *rows = table
        width = len(_cells(header))
        assert len(_cells(separator)) == width
        assert all(re.fullmatch(r":---|---:", c) for c in _cells(separator)), separator
        assert rows and all(len(_cells(r)) == width for r in rows), table
    # and as a GFM parser reads them
    parsed = _html_tables(text)
    assert [[n for n, _ in t] for t in parsed] == [[len(_cells(t[0]))] * (len(t) - 1) for t in tables]


def test_numbers_are_right_aligned_and_text_left() -> None:
    table = next(t for t in _tables(_render(rich_profile())) if _cells(t[0])[0] == "cpu")
    assert _cells(table[0]) == ["cpu", "python", "native", "wait", "memory", "pid", "line", "source"]
    assert _cells(table[1]) == ["---:"] * 6 + [":---"] * 2


def test_awkward_source_lines_show_verbatim_in_one_cell() -> None:
    text = _render(_with_sources(AWKWARD_SOURCES))
    held = next(t for t in _tables(text) if _cells(t[0]) == ["bytes", "pid", "line", "source"])
    assert len(held) == 2 + len(AWKWARD_SOURCES)
    assert all(len(_cells(row)) == 4 for row in held), held
    # as a GFM parser reads them: the held-by rows, found by their location cell
    parsed = {
        codes[0]: (n, codes)
        for table in _html_tables(text)
        for n, codes in table
        if codes and codes[0].startswith("train.py:2")
    }
    for i, source in enumerate(AWKWARD_SOURCES):
        n, codes = parsed[f"train.py:{200 + i}"]
        assert n == 4
        assert codes[1] == source


def test_no_lines_no_line_tables() -> None:
    text = _render(dataclasses.replace(rich_profile(), lines=[]))
    assert "CPU time by line" not in text and "waiting" not in text
    assert "resident peak held by" in text  # the other tables stay
    minimal = _render(minimal_profile())
    assert "|" not in minimal and "**" in minimal  # not one table, and the peak still in bold
    for absent in ("phases", "processes", "held by", "allocation", "CPU time", "leak", "imports", "note"):
        assert absent not in minimal


def test_one_process_has_no_pid_column_and_no_process_table() -> None:
    p = rich_profile()
    one = dataclasses.replace(p, processes=p.processes[:1])
    text = _render(one)
    assert "**processes" not in text
    for table in _tables(text):
        assert "pid" not in _cells(table[0]) or _cells(table[0])[0] == "phase", table[0]
    assert "- process peak 600 MiB = baseline" in text  # no [pid] before a reconciliation either


def test_limits_and_long_sources() -> None:
    long = "x = " + "a + " * 60 + "b"
    text = _render(_with_sources([long, "y = 1", "z = 2"]), max_lines=2)
    held = next(t for t in _tables(text) if _cells(t[0]) == ["bytes", "pid", "line", "source"])
    assert len(held) == 2 + 2
    cut = _cells(held[2])[-1].strip("`")
    assert len(cut) == 120 and cut.endswith("…") and long.startswith(cut[:-1])
    cpu = next(t for t in _tables(text) if _cells(t[0])[0] == "cpu")
    assert len(cpu) == 2 + 2


@pytest.mark.parametrize(
    ("status", "shown"),
    [
        (ExitStatus(code=0), "exit 0 · wall"),
        (ExitStatus(code=3), "**exit 3** · wall"),
        (ExitStatus(code=None), "in-process · wall"),
        (ExitStatus(signal=15, signal_name="SIGTERM"), "**killed by SIGTERM** · wall"),
        (ExitStatus(signal=9, signal_name="SIGKILL", oom_killed=True), "**killed by the OOM killer** · wall"),
    ],
)
def test_exit_status_wording(status: ExitStatus, shown: str) -> None:
    lines = _render(dataclasses.replace(minimal_profile(), exit=status)).splitlines()
    assert lines[2].startswith(shown)


def test_peak_bounds_as_in_the_terminal_report() -> None:
    p = minimal_profile()
    assert "**resident peak 60.0 MiB** (exact) at 310 ms" in _render(p)
    bounded = dataclasses.replace(p, peak=dataclasses.replace(p.peak, error_bound_bytes=512 * 1024))
    assert "**resident peak 60.0 MiB** ±512 KiB at 310 ms" in _render(bounded)
    unknown = dataclasses.replace(
        p, peak=dataclasses.replace(p.peak, error_bound_bytes=1, notes=[UNBOUNDED_NOTE])
    )
    text = _render(unknown)
    assert "**resident peak 60.0 MiB** (a lower bound)" in text and "±" not in text
    assert f"> note: {UNBOUNDED_NOTE}" in text


def test_deterministic_and_free_of_the_working_directory() -> None:
    p = rich_profile()
    text = _render(p)
    assert text == _render(rich_profile())
    assert FAKE_CWD not in text and "2026" not in text  # no absolute paths, no clock
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert not any(line != line.rstrip() for line in text.splitlines())  # no hard line breaks


def test_plain_text_cells_are_escaped() -> None:
    p = rich_profile()
    p.phases[0].name = "load *all* | [x]"
    text = _render(p)
    phases = next(t for t in _tables(text) if _cells(t[0])[0] == "phase")
    assert _cells(phases[2])[0] == "load \\*all\\* \\| \\[x\\]"
    assert len(_cells(phases[2])) == 7


def test_lines_and_attribution_kept_apart_from_sources_with_line_zero() -> None:
    p = dataclasses.replace(
        rich_profile(),
        lines=[LineStats(100, "<string>", 0, "<module>", 1.0, 0.0, 0.0, 0, 10, "")],
    )
    cpu = next(t for t in _tables(_render(p)) if _cells(t[0])[0] == "cpu")
    assert _cells(cpu[2])[-2:] == ["`<string>`", ""]
