"""Renderers over hand-built profiles: exact inputs, exact expectations."""

from __future__ import annotations

import json

import pytest

from memgauge.analysis import phase_rows, sparkline, top_processes
from memgauge.model._profile import (
    UNBOUNDED_NOTE,
    CpuTimes,
    ExitStatus,
    Peak,
    PhaseRecord,
    ProcessRecord,
    Profile,
    Timeline,
)
from memgauge.render import JsonRenderer, Renderer, TerminalRenderer

MIB = 1 << 20


def _profile(**peak: object) -> Profile:
    return Profile(
        command=["python", "train.py", "--epochs", "3"],
        exit=ExitStatus(code=None, signal=9, signal_name="SIGKILL", oom_killed=True),
        wall_seconds=10.0,
        cpu=CpuTimes(7.5, 0.5),
        peak=Peak(
            resident_bytes=512 * MIB,
            method="cgroup-v1 memory.max_usage_in_bytes",
            error_bound_bytes=512 * 1024,
            at_seconds=4.0,
            includes_page_cache=True,
            largest_process_bytes=400 * MIB,
            sampled_tree_bytes=500 * MIB,
            **peak,  # type: ignore[arg-type]
        ),
        processes=[
            ProcessRecord(10, 1, ["python", "train.py"], 0.0, 10.0, 400 * MIB, 5.0, 0.3, True),
            ProcessRecord(11, 10, ["python", "worker.py"], 1.0, 9.0, 150 * MIB, 2.5, 0.2, False),
        ],
        phases=[
            PhaseRecord("load", 10, 0.0, 2.5, 200 * MIB, 20 * MIB, 150 * MIB),
            PhaseRecord("parse", 10, 0.5, 1.5, 180 * MIB, 60 * MIB, 100 * MIB, depth=1, parent=0),
            PhaseRecord("fit", 10, 2.5, 10.0, 400 * MIB, 150 * MIB, 0, peak_exact=False, complete=False),
        ],
        timeline=Timeline(0.01, [0.0, 4.0, 8.0], [10 * MIB, 500 * MIB, 100 * MIB]),
    )


def test_terminal_report_states_every_figure() -> None:
    text = TerminalRenderer(width=100).render(_profile())
    assert "memgauge python train.py --epochs 3" in text
    assert (
        "killed by the OOM killer · wall 10.00 s · user 7.50 s · system 500 ms · CPU 80% of one core" in text
    )
    assert "resident peak 512 MiB ±512 KiB at 4.00 s" in text
    assert "page cache included; largest process 400 MiB" in text
    lines = text.splitlines()
    load = next(line for line in lines if line.startswith("load "))
    parse = next(line for line in lines if line.startswith("  parse "))
    fit = next(line for line in lines if line.startswith("fit (unfinished)"))
    assert "25%" in load and "200 MiB" in load and "+180 MiB" in load
    assert "180 MiB" in parse and "+120 MiB" in parse
    assert "400 MiB ≥" in fit and "75%" in fit
    assert "processes (2 of 2, by peak)" in text
    procs = [line.split() for line in lines if line.strip().startswith(("10 ", "11 "))]
    assert [row[0] for row in procs] == ["10", "11"]  # by peak
    assert procs[1][-2:] == ["python", "worker.py"]


def test_unknown_bound_is_not_called_exact() -> None:
    text = TerminalRenderer().render(_profile(notes=[UNBOUNDED_NOTE]))
    assert "(a lower bound)" in text and "(exact)" not in text and "±" not in text.split("\n")[2]


def test_json_renderer_round_trips() -> None:
    p = _profile()
    renderers: list[Renderer] = [JsonRenderer(), TerminalRenderer()]
    assert all(isinstance(r.render(p), str) for r in renderers)
    assert Profile.from_dict(json.loads(JsonRenderer(indent=2).render(p))) == p


def test_analysis_helpers() -> None:
    p = _profile()
    rows = phase_rows(p)
    assert [round(r.share, 2) for r in rows] == [0.25, 0.1, 0.75]
    assert [r.growth_bytes for r in rows] == [180 * MIB, 120 * MIB, 250 * MIB]
    assert [q.pid for q in top_processes(p, 1)] == [10]
    assert sparkline([0, 1, 2, 3, 4, 5, 6, 7, 8], width=9) == " ▁▂▃▄▅▆▇█"
    assert sparkline([5, 0, 0, 0], width=2) == "█ "  # each column shows its maximum
    assert sparkline([], width=5) == ""


def test_terminal_report_of_lines_attribution_leaks_imports_and_allocations() -> None:
    import dataclasses

    from memgauge.model._profile import (
        AllocationPeak,
        Attribution,
        ImportRecord,
        LeakSuspect,
        LineStats,
        Reconciliation,
    )

    base = _profile()
    p = dataclasses.replace(
        base,
        peak=dataclasses.replace(
            base.peak,
            attribution=[
                Attribution(11, "/proj/worker.py", 7, "fit", 300 * MIB, source="w = np.ones(n)"),
                Attribution(10, "<startup>", 0, "interpreter start-up", 12 * MIB),
            ],
        ),
        lines=[
            LineStats(10, "/proj/train.py", 3, "main", 1.5, 0.5, 0.0, 64 * MIB, 200, "x = load()"),
            LineStats(10, "/proj/train.py", 9, "main", 0.0, 0.0, 4.0, 0, 400, "time.sleep(4)"),
        ],
        imports=[ImportRecord(10, "numpy", 0.1, 0.25, 20 * MIB, 0.2, 18 * MIB)],
        leaks=[LeakSuspect(10, "/proj/train.py", 5, "handle", 2 * MIB, 60 * MIB, 1.0, 9.0, 0.99, "c[k] = v")],
        allocation_peak=AllocationPeak(
            1024 * MIB,
            {"10": 1024 * MIB},
            [Attribution(10, "/proj/train.py", 4, "main", 1000 * MIB, source="a = np.empty(n)")],
        ),
        reconciliation=[Reconciliation(10, 400 * MIB, 1024 * MIB, 20 * MIB, 700 * MIB, 56 * MIB, ["a note"])],
    )
    text = TerminalRenderer(width=120, cwd="/proj").render(p)
    lines = text.splitlines()

    def row(title: str, n: int = 1) -> list[str]:
        at = next(i for i, line in enumerate(lines) if line.startswith(title))
        return [line.split() for line in lines[at + 2 : at + 2 + n]]

    held = row("resident peak held by", 2)
    assert held[0][:5] == ["300", "MiB", "11", "worker.py:7", "w"] and held[1][:4] == [
        "12.0",
        "MiB",
        "10",
        "<startup>",
    ]
    cpu = row("CPU time by line")[0]
    assert cpu[:7] == ["2.00", "s", "75%", "25%", "0%", "+64.0", "MiB"] and "train.py:3" in cpu
    assert row("waiting")[0][:3] == ["4.00", "s", "10"]
    leak = row("leak suspects")[0]
    assert leak[:4] == ["2.0", "MiB/s", "60.0", "MiB"] and "train.py:5" in leak
    assert row("allocation peak 1.0 GiB")[0][:3] == ["1000", "MiB", "10"]
    assert any(
        "process peak 400 MiB = baseline 20.0 MiB + allocations 1.0 GiB"
        " - never written 700 MiB + other 56.0 MiB" in " ".join(line.split())
        for line in lines
    ), text
    assert row("imports: 200 ms, +18.0 MiB in all")[0][:6] == ["numpy", "250", "ms", "+20.0", "MiB", "200"]
    # too narrow for one line: the reconciliation breaks before the '-', under the '='
    narrow = TerminalRenderer(width=80, cwd="/proj").render(p).splitlines()
    at = next(i for i, line in enumerate(narrow) if "process peak 400 MiB =" in line)
    assert narrow[at].endswith("+ allocations 1.0 GiB")
    assert narrow[at + 1].strip() == "- never written 700 MiB + other 56.0 MiB"
    assert narrow[at + 1].index("-") == narrow[at].index("=")


def test_two_rows_of_one_line_show_their_functions() -> None:
    import dataclasses

    from memgauge.model._profile import LineStats

    p = dataclasses.replace(
        _profile(),
        lines=[
            LineStats(10, "/proj/a.py", 5, "<genexpr>", 1.0, 0.0, 0.0, 0, 100, "s = sum(x for x in xs)"),
            LineStats(10, "/proj/a.py", 5, "main", 0.5, 0.0, 0.0, 0, 50, "s = sum(x for x in xs)"),
            LineStats(10, "/proj/a.py", 9, "main", 0.2, 0.0, 0.0, 0, 20, "print(s)"),
        ],
    )
    text = TerminalRenderer(width=120, cwd="/proj").render(p)
    assert "a.py:5 <genexpr>" in text and "a.py:5 main" in text
    assert "a.py:9 " in text and "a.py:9 main" not in text


# -- what every renderer shares: the layout, the HTML sections, the derived rows ----------------------


def test_layout_leaves_out_optional_columns_in_order_and_never_cuts_a_figure() -> None:
    from rich.console import Console

    from memgauge.render._layout import Layout

    layout = Layout(30)
    name = layout.rest("name", least=8, removable=False)
    first = layout.figure("first")
    second = layout.figure("second")
    kept = layout.figure("kept")
    layout.add_row("a long name that will be cut", "1,000,000", "2,000,000", "3,000,000")
    table = layout.fit([first, second])
    # 8 characters of name and three figures of 9 do not fit in 30: the first figure goes
    assert [c.header for c in table.columns] == ["name", "second", "kept"]
    assert all(c is not first for c in table.columns) and second in table.columns
    assert name.max_width == 8
    console = Console(width=30, record=True, no_color=True)
    console.print(table)
    lines = console.export_text().splitlines()
    assert all(len(line) <= 30 for line in lines)
    assert "3,000,000" in lines[1] and lines[1].startswith("a long")
    assert all(c.min_width == c.max_width == 9 for c in table.columns if c is kept)


def test_layout_second_chance_takes_back_a_column_a_later_one_made_room_for() -> None:
    from memgauge.render._layout import Layout

    def fitted(second_chance: bool) -> list[str]:
        layout = Layout(20)
        layout.figure("x")
        narrow = layout.figure("n")
        wide = layout.figure("wide")
        # leaving out the narrow one is not enough; once the wide one is out, it fits again
        layout.add_row("1234567890", "1234", "123456789012")
        return [str(c.header) for c in layout.fit([narrow, wide], second_chance=second_chance).columns]

    assert fitted(False) == ["x"]
    assert fitted(True) == ["x", "n"]


def test_html_nav_links_exactly_the_sections_the_page_has() -> None:
    import re

    from memgauge.render import HtmlRenderer

    page = HtmlRenderer().render(_profile())
    nav = re.search(r"<nav>(.*?)</nav>", page)
    assert nav is not None
    links = re.findall(r'href="#([^"]+)"', nav.group(1))
    sections = re.findall(r'<section id="([^"]+)"', page)
    assert links == [s for s in sections if s not in ("summary", "allocation")]
    assert links[:2] == ["memory", "phases"] and "leaks" not in links  # no leak suspects, no link


def test_sections_register_once_and_build_in_order() -> None:
    import pytest

    from memgauge.render._html_page import Part, Sections

    sections: Sections[int] = Sections()
    sections.register("a", "first", lambda n: Part(f"<p>{n}</p>", "A"))
    sections.register("b", None, lambda n: Part("<p>b</p>") if n > 1 else None)
    sections.register("c", "third", lambda n: Part("<p>c</p>", note="n<b>b</b>"))
    with pytest.raises(ValueError):
        sections.register("a", "again", lambda n: None)
    nav, html = sections.build(1)
    assert nav == '<a href="#a">first</a><a href="#c">third</a>'
    assert html == (
        '<section id="a"><h2>A</h2><p>1</p></section>\n'
        '<section id="c"><p class="note">n<b>b</b></p><p>c</p></section>\n'
    )
    assert sections.ids == ["a", "b", "c"]


def test_import_ranking_and_totals() -> None:
    from memgauge.analysis import import_totals, top_imports
    from memgauge.model import ImportRecord

    p = _profile()
    p.imports = [
        ImportRecord(10, "numpy", 0.1, 0.20, 30 * MIB, 0.15, 20 * MIB),
        ImportRecord(10, "torch", 0.4, 0.90, 300 * MIB, 0.80, 280 * MIB),
        ImportRecord(10, "tiny", 0.3, 0.005, 1 * MIB, 0.005, 1 * MIB),
        ImportRecord(10, "pandas", 0.5, 0.20, 40 * MIB, 0.10, 10 * MIB),
    ]
    by_time = [r.package for r in top_imports(p, 3, by="time", least_seconds=0.01)]
    assert by_time == ["torch", "numpy", "pandas"]  # a tie keeps the import order; "tiny" too short
    assert [r.package for r in top_imports(p, by="memory")] == ["torch", "pandas", "numpy", "tiny"]
    assert [r.package for r in top_imports(p, 2, by="own memory")] == ["torch", "numpy"]
    totals = import_totals(p)
    # approx: sum() rounds differently from 3.12 on (compensated)
    assert totals.seconds == pytest.approx(0.15 + 0.80 + 0.005 + 0.10)
    assert totals.resident_bytes == (20 + 280 + 1 + 10) * MIB
