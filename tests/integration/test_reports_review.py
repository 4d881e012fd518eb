"""Regressions found by a review of the reports (terminal, markdown, HTML, compare) with real
runs, real files and headless Chromium: each test names the symptom it guards against.

Chromium tests skip without Chromium or Playwright, unless MEMGAUGE_REQUIRE_BROWSER=1 (as in
test_html_browser.py).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import compare
from memgauge.model._profile import (
    CpuTimes,
    ExitStatus,
    LeakSuspect,
    Peak,
    PhaseRecord,
    ProcessRecord,
    Profile,
    Timeline,
)
from memgauge.render import (
    HtmlComparisonRenderer,
    HtmlRenderer,
    MarkdownRenderer,
    TerminalComparisonRenderer,
    TerminalRenderer,
)
from tests import factories
from tests.conftest import MIB, PROGRAMS, run_memgauge
from tests.synthetic import long_profile
from tests.unit.test_golden import FAKE_CWD, rich_profile

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def memgauge(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memgauge", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
    )


def with_real_pids(profile: Profile, base: int = 2_619_400) -> Profile:
    """``profile`` with the 7-digit pids of a machine whose pid_max is 4194304 (the golden
    profiles use 100, 101, 102, and hide how wide a real pid column is)."""

    def remap(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: (base + v if k in ("pid", "ppid") and isinstance(v, int) else remap(v))
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [remap(v) for v in value]
        return value

    data = remap(profile.to_dict())
    if data.get("allocation_peak"):
        data["allocation_peak"]["processes"] = {
            str(base + int(k)): v for k, v in data["allocation_peak"]["processes"].items()
        }
    return Profile.from_dict(data)


def plain_lines(text: str) -> list[str]:
    return [ANSI.sub("", line).rstrip() for line in text.splitlines()]


# -- the terminal report ----------------------------------------------------------------------


def _table(lines: list[str], title: str) -> list[str]:
    """The lines of the table titled ``title``: its header and rows, up to the next title."""
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next(
        (
            i
            for i in range(start + 2, len(lines))
            if lines[i] and not lines[i][0].isspace() and "  " not in lines[i]
        ),
        len(lines),
    )
    return lines[start + 1 : end]


@pytest.mark.parametrize("width", [40, 60, 80, 200])
@pytest.mark.parametrize("color", [False, True])
def test_terminal_never_cuts_a_figure_on_a_narrow_terminal(width: int, color: bool) -> None:
    """At 60 columns with real pids the phase table was cropped mid-figure ("+75.4 Mi", "0" for
    "0 B"); at 40 the line table lost its locations and "own time" read "5" for "5 ms". Columns
    now go whole, least telling first."""
    profile = with_real_pids(rich_profile())
    lines = plain_lines(TerminalRenderer(width=width, color=color, cwd=FAKE_CWD).render(profile))
    assert max(len(line) for line in lines) <= width
    phases = _table(lines, "phases")
    header = phases[0].split()
    for ph, row in zip(profile.phases, phases[1:], strict=True):
        if "peak" in header:
            assert format_bytes(ph.peak_resident_bytes) in row, (row, phases)
        if "growth" in header:
            grown = format_bytes(ph.peak_resident_bytes - ph.start_resident_bytes, signed=True)
            assert row.endswith(grown), (row, phases)
        if "duration" in header:
            assert format_seconds(ph.duration_seconds) in row
    # the line table keeps a location on every row: its figures mean nothing without one
    cpu = _table(lines, "CPU time by line")
    assert "line" in cpu[0].split()
    assert all(re.search(r"(:\d+|<\w+>)", row) for row in cpu[1:]), cpu
    imports = _table(lines, "imports:")
    for record, row in zip(sorted(profile.imports, key=lambda r: -r.seconds), imports[1:], strict=False):
        shown = row.split()
        if "own" in imports[0]:
            assert format_seconds(record.self_seconds) in row, (row, imports)
        assert (
            shown[-1] == str(record.pid)
            or shown[-1] in format_seconds(record.self_seconds)
            or (
                " ".join(shown[-2:])
                in (format_seconds(record.self_seconds), format_bytes(record.resident_bytes, signed=True))
            )
        )


@pytest.mark.parametrize("width", [40, 60, 80, 100])
def test_header_lines_break_between_figures_not_inside_one(width: int) -> None:
    """At 80 columns the memory line wrapped as "... over 657" / "ms": the sparkline left no room
    for the figures after it. Lines now break between terms only."""
    p = with_real_pids(rich_profile())
    p.wall_seconds = 657.4  # "10 min 57 s": a long figure
    # a real run's timeline: enough samples for a full-width sparkline
    t = [p.wall_seconds * i / 199 for i in range(200)]
    p.timeline = Timeline(t[1], t, [(100 + i) * MIB for i in range(200)], None, t, [0.0] * 200)
    lines = plain_lines(TerminalRenderer(width=width, cwd=FAKE_CWD).render(p))
    text = "\n".join(lines)
    for figure in (
        f"wall {format_seconds(p.wall_seconds)}",
        f"user {format_seconds(p.cpu.user_seconds)}",
        f"system {format_seconds(p.cpu.system_seconds)}",
        f"±{format_bytes(p.peak.error_bound_bytes)}",
        f"over {format_seconds(p.wall_seconds)}",
        f"largest process {format_bytes(p.peak.largest_process_bytes)}",
    ):
        assert figure in text, (figure, text[:600])
    assert max(len(line) for line in lines) <= width
    memory = next(line for line in lines if line.startswith("memory"))
    assert len(memory) > len("memory ") + 3  # a sparkline, not an empty line


def test_strings_from_the_profile_are_not_rich_markup() -> None:
    """A phase named "[/]" made TerminalRenderer raise MarkupError; "[red]x[/red]" lost its
    brackets. The peak method and the process commands are strings from the profile too."""
    p = with_real_pids(rich_profile())
    p.phases[0].name = "load [/] [red]x[/red]"
    p.peak.method = "[/] method"
    p.processes[1].cmdline = ["python", "[/]", "[bold]arg"]
    text = "\n".join(plain_lines(TerminalRenderer(width=200, cwd=FAKE_CWD).render(p)))
    assert "load [/] [red]x[/red]" in text
    assert "by [/] method" in text
    assert "python '[/]' '[bold]arg'" in text


def test_run_with_a_bracketed_phase_name_keeps_the_exit_code(tmp_path: Path) -> None:
    """`memgauge run` of a program with such a phase exited 70 (internal error) after the run,
    losing the program's own exit code and the report."""
    program = tmp_path / "brackets.py"
    program.write_text(
        "import sys\nimport memgauge\n"
        "with memgauge.phase('load [/] [bold]x'):\n    data = bytearray(8 << 20)\n"
        "sys.exit(3)\n"
    )
    r = run_memgauge(["--no-lines", str(program), "[/]"], tmp_path)
    assert r.returncode == 3, r.stderr
    assert "load [/] [bold]x" in r.stderr
    assert "internal error" not in r.stderr


def test_many_phase_records_are_summed_by_name_in_terminal_and_markdown() -> None:
    """A phase per batch (8102 records in an hour) printed 8102 rows, took seconds to render,
    and made markdown of 550 KB: GitHub refuses a comment over 65536 characters."""
    profile = long_profile(hours=1.0)
    terminal = TerminalRenderer(width=100).render(profile)
    markdown = MarkdownRenderer().render(profile)
    assert len(terminal.splitlines()) < 120
    assert len(markdown) < 65536
    for text in (terminal, markdown):
        assert f"phases ({len(profile.phases)} records, summed by name)" in text.replace("**", "")
    # the same figures in both: the "batch" name, its count and total time
    batches = [ph for ph in profile.phases if ph.name == "batch"]
    count, total = str(len(batches)), format_seconds(sum(ph.duration_seconds for ph in batches))
    row = next(line for line in terminal.splitlines() if line.lstrip().startswith("batch"))
    assert row.split()[1] == count and total in row
    md_row = next(line for line in markdown.splitlines() if line.startswith("| batch |"))
    assert f"| {count} | {total} |" in md_row


def test_distinct_phase_names_are_capped_everywhere() -> None:
    """Summing by name does nothing for "batch 0", "batch 1", ...: the HTML report held 8102
    rows and bars (2.9 MB), the terminal and markdown every record."""
    profile = long_profile(hours=1.0)
    for i, ph in enumerate(profile.phases):
        ph.name = f"{ph.name} {i}"
    note = f"the 30 of {len(profile.phases)} names with the most time"
    terminal = TerminalRenderer(width=120).render(profile)
    assert note in terminal and len(terminal.splitlines()) < 120
    markdown = MarkdownRenderer().render(profile)
    assert note in markdown and len(markdown) < 65536
    page = HtmlRenderer().render(profile)
    assert len(page) < 1_500_000
    phases = re.search(r'<section id="phases".*?</section>', page, re.S)
    assert phases is not None
    assert phases.group().count("<tr>") == 150 + 1
    data = json.loads(re.findall(r'id="memgauge-data">(.*?)</script>', page)[0])
    assert len(data["phases"]["labels"]) == 20


def test_negative_durations_read_as_such() -> None:
    """A phase whose end is before its start read "-500000 µs"."""
    assert format_seconds(-0.5) == "-500 ms"
    assert format_seconds(-90) == "-1 min 30 s"
    p = rich_profile()
    p.phases[0].end_seconds = p.phases[0].start_seconds - 0.5
    assert "-500 ms" in TerminalRenderer(width=100, cwd=FAKE_CWD).render(p)
    assert "-500 ms" in MarkdownRenderer(cwd=FAKE_CWD).render(p)


# -- compare in the terminal ------------------------------------------------------------------


def _five() -> list[Profile]:
    out = []
    for k in range(5):
        p = with_real_pids(rich_profile())
        p.peak.resident_bytes += k * 37 * MIB
        p.wall_seconds += k * 1.3
        out.append(p)
    return out


@pytest.mark.parametrize(("count", "width"), [(5, 80), (5, 100), (5, 200), (2, 40), (2, 60), (3, 60)])
def test_compare_shows_whole_figures(count: int, width: int) -> None:
    """Five profiles at 100 columns (the width when piped) read "409…" in every cell; with five
    at 40 the baseline's column vanished, so another profile's values sat under the first
    header. The ratio, then the delta columns now go whole, while the values fit."""
    profiles = _five()[:count]
    names = ["base", "b", "c", "d", "e"][:count]
    lines = plain_lines(TerminalComparisonRenderer(width=width).render(compare(profiles, names)))
    assert max(len(line) for line in lines) <= width
    summary = next(i for i, line in enumerate(lines) if line.lstrip().startswith("resident peak "))
    header = lines[summary - 1].split()
    assert header[0] == "base"
    row = lines[summary]
    assert "…" not in row, row
    assert [h for h in header if h in names] == names
    for p in profiles:
        assert format_bytes(p.peak.resident_bytes) in row, (row, header)


@pytest.mark.parametrize("names", [["source", "line"], ["phase", "command"], ["a[/]", "[red]b"]])
def test_compare_names_are_neither_markup_nor_column_roles(names: list[str], tmp_path: Path) -> None:
    """Columns were told apart by header: a profile named "source" or "line" was taken for the
    source or location column, and the figures of the lines table vanished; a name with "[/]"
    crashed the command (exit 70)."""
    paths: list[str] = []
    for p in _five()[:2]:
        path = tmp_path / f"{len(paths)}.json"
        p.save(path)
        paths.append(str(path))
    r = memgauge("compare", "--names", ",".join(names), "--width", "80", *paths, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = plain_lines(r.stdout)
    held = _table(lines, "resident peak held by")
    assert held[0].split()[:2] == names
    top = rich_profile().peak.attribution[0]
    figure = format_bytes(top.bytes)
    assert held[1].split()[:4] == [*figure.split(), *figure.split()], held
    assert "train.py:42" in held[1], held
    phases = _table(lines, "phases (highest peak")
    assert phases[0].split()[:3] == ["phase", *names]


# -- markdown ------------------------------------------------------------------------------------


def test_markdown_tables_survive_hostile_strings() -> None:
    """Pipes, backticks, HTML, CR/LF in sources, names and commands keep every row a table row
    with as many cells as its header (rendered with markdown-it-py, as GitHub renders GFM)."""
    markdown_it = pytest.importorskip("markdown_it")
    p = with_real_pids(rich_profile())
    evil = "a | b `c` ``d`` <b>e</b> &amp;\r\nf\\|g"
    p.phases[1].name = evil
    p.peak.attribution[0].source = evil
    p.lines[0].source = evil
    p.imports[0].package = evil
    p.processes[0].cmdline = ["python", evil]
    page = markdown_it.MarkdownIt("gfm-like").render(MarkdownRenderer(cwd=FAKE_CWD).render(p))
    assert not re.search(r"<(b|script)>", page)
    for table in re.findall(r"<table>.*?</table>", page, re.S):
        head, body = table.split("</thead>")
        columns = len(re.findall(r"<th[ >]", head))
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S):
            assert len(re.findall(r"<td[ >]", row)) == columns, row


# -- profiles a report cannot be drawn from --------------------------------------------------


def test_nan_in_a_profile_is_a_malformed_profile(tmp_path: Path) -> None:
    """NaN or Infinity (Python's json reads them) made every report fail as an internal error
    (exit 70); a malformed profile exits 65."""
    data = rich_profile().to_dict()
    text = json.dumps(data).replace('"wall_seconds": 12.5', '"wall_seconds": NaN')
    assert "NaN" in text
    (tmp_path / "nan.json").write_text(text)
    data["wall_seconds"] = "inf"
    (tmp_path / "inf.json").write_text(json.dumps(data))
    for name in ("nan.json", "inf.json"):
        for extra in ([], ["--html", "r.html"], ["--format", "json"]):
            r = memgauge("view", name, *extra, cwd=tmp_path)
            assert r.returncode == 65, r.stderr
            assert "internal error" not in r.stderr


# -- the HTML report -------------------------------------------------------------------------


def test_leak_rate_sorts_by_bytes_per_second() -> None:
    """The rate column's sort key was its text: "168 MiB/s" sorted as 168, below "500 KiB/s"."""
    p = rich_profile()
    page = HtmlRenderer(cwd=FAKE_CWD).render(p)
    for leak in p.leaks:
        assert f'data-v="{leak.rate_bytes_per_second}"' in page


def test_single_sample_leaves_no_empty_cpu_chart() -> None:
    """With one sample there is no CPU rate: the page showed an empty 220 px box."""
    p = rich_profile()
    p.timeline = Timeline(0.01, [0.0], [10 * MIB], None, [0.0], [0.0])
    page = HtmlRenderer(cwd=FAKE_CWD).render(p)
    assert 'id="chart-memory"' in page and 'id="chart-cpu"' not in page


def open_page(browser: Any, path: Path, width: int = 1280) -> Any:
    page = browser.new_page(viewport={"width": width, "height": 900})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-rendered], body[data-failed]", state="attached", timeout=15_000)
    assert page.get_attribute("body", "data-failed") is None, page.inner_text("#memgauge-error")
    assert problems == []
    return page


def _long_strings(p: Profile) -> Profile:
    """Paths and sources as long as a deep project makes them, and names with no space to
    wrap at."""
    deep = "/home/someone/work/projects/" + "a_rather_long_package_name/" * 3
    for a in p.peak.attribution:
        a.file = deep + a.file.rsplit("/", 1)[-1]
        a.source = "result = transform(load(path), columns=[c for c in header if keep(c)]) + extra"
    for s in p.lines:
        s.file = deep + s.file.rsplit("/", 1)[-1]
        s.source = "predictions = [sum(w * c[i] for w, c in zip(weights, columns)) for i in rows]"
    p.phases[0].name = "phase_" + "x" * 300
    p.command = ["python", deep + "x" * 200 + ".py"]
    return p


def test_reports_fit_a_1280_pixel_window(browser: Any, tmp_path: Path) -> None:
    """The line table of a multi-process run (the README's pipeline example) made the page 1558 px
    wide; a long phase name or command 3500 px; five profiles compared 1745 px."""
    pages = {
        "report.html": HtmlRenderer(cwd=FAKE_CWD).render(_long_strings(with_real_pids(rich_profile()))),
        "compare.html": HtmlComparisonRenderer().render(
            compare([_long_strings(p) for p in _five()], ["base", "b", "c", "d", "e"])
        ),
    }
    for name, text in pages.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        for width in (1280, 1024):
            page = open_page(browser, path, width)
            assert page.evaluate("document.documentElement.scrollWidth") <= width, (name, width)
            # a cut path or source can still be read whole
            titles = page.eval_on_selector_all("td code[title]", "els => els.map(e => e.title)")
            assert titles and all(titles)
            page.close()


def test_real_run_report_fits_and_sorts(browser: Any, tmp_path: Path) -> None:
    """A real run's report: no horizontal scroll at 1280 px, and every sortable column sorts,
    numbers as numbers, cells without a value ("—") last either way."""
    html = tmp_path / "spike.html"
    r = run_memgauge(["--html", str(html), str(PROGRAMS / "spawn_child_peak.py")], tmp_path)
    assert r.returncode == 0, r.stderr
    page = open_page(browser, html)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    problems = page.evaluate(
        """() => {
          const out = [];
          document.querySelectorAll('table.sortable').forEach((table, t) => {
            table.querySelectorAll('thead th').forEach((th, col) => {
              for (const dir of [-1, 1]) {
                th.click();
                const vals = Array.from(table.tBodies[0].rows).map(r => r.cells[col].dataset.v);
                const gap = vals.indexOf(undefined);
                if (gap >= 0 && vals.slice(gap).some(v => v !== undefined))
                  out.push(`${t}/${col}: — not last`);
                const kept = vals.filter(v => v !== undefined);
                for (let i = 1; i < kept.length; i++) {
                  const c = th.classList.contains('num') ? parseFloat(kept[i - 1]) - parseFloat(kept[i])
                                                         : kept[i - 1].localeCompare(kept[i]);
                  if (Number.isNaN(c) || c * dir > 0) {
                    out.push(`${t}/${col}: ${kept[i - 1]} ${kept[i]}`);
                    break;
                  }
                }
              }
            });
          });
          return out;
        }"""
    )
    assert problems == []
    page.close()


def test_leaks_and_parents_sort_by_value_in_the_browser(browser: Any, tmp_path: Path) -> None:
    """Leak rates sorted by the number before their unit; a process without a parent had an
    empty sort key, which compared as NaN and left the parent column unsorted."""
    p = rich_profile()
    p.leaks = [
        LeakSuspect(100, f"{FAKE_CWD}/a.py", 1, "f", 500 * 1024, MIB, 1.0, 9.0, 0.99),
        LeakSuspect(100, f"{FAKE_CWD}/b.py", 2, "g", 168 * MIB, 500 * MIB, 1.0, 9.0, 0.99),
        LeakSuspect(100, f"{FAKE_CWD}/c.py", 3, "h", 2 * MIB, 20 * MIB, 1.0, 9.0, 0.99),
    ]
    p.processes.append(ProcessRecord(103, None, ["python", "-c", "orphan"], 1.0, 2.0, MIB))
    p.processes[1].ppid = 42
    path = tmp_path / "sort.html"
    path.write_text(HtmlRenderer(cwd=FAKE_CWD).render(p), encoding="utf-8")
    page = open_page(browser, path)
    page.click("#leaks thead th:nth-child(1)")
    rates = page.eval_on_selector_all("#leaks tbody tr td:nth-child(1)", "tds => tds.map(t => t.textContent)")
    assert rates == ["168 MiB/s", "2.0 MiB/s", "500 KiB/s"]
    for _ in range(2):
        page.click("#processes thead th:nth-child(2)")
        parents = page.eval_on_selector_all(
            "#processes tbody tr td:nth-child(2)", "tds => tds.map(t => t.textContent)"
        )
        assert parents[-1] == "—"
        numbers = [int(x) for x in parents[:-1]]
        assert numbers in (sorted(numbers), sorted(numbers, reverse=True))
    page.close()


def test_edge_profiles_render_in_the_browser(browser: Any, tmp_path: Path) -> None:
    """Profiles at the edges draw without an error: no timeline, one sample, zero wall time, a
    phase ending before it starts, TiB figures, a v1 profile, no processes."""
    base = with_real_pids(rich_profile())
    cases: dict[str, Profile] = {}
    empty = Profile.from_dict(base.to_dict())
    empty.timeline = Timeline()
    cases["empty"] = empty
    one = Profile.from_dict(base.to_dict())
    one.timeline = Timeline(0.01, [0.0], [10 * MIB], None, [0.0], [0.0])
    cases["one"] = one
    zero = Profile.from_dict(base.to_dict())
    zero.wall_seconds = 0.0
    zero.cpu = CpuTimes()
    cases["zero"] = zero
    backwards = Profile.from_dict(base.to_dict())
    backwards.phases[0] = PhaseRecord("back", 1, 5.0, 4.0, 10 * MIB, 20 * MIB)
    cases["backwards"] = backwards
    huge = Profile.from_dict(base.to_dict())
    huge.peak.resident_bytes = 5 << 50
    huge.timeline.tree_resident_bytes = [v << 20 for v in huge.timeline.tree_resident_bytes]
    cases["huge"] = huge
    data = factories.legacy_profile(base.to_dict(), 1)
    for key in ("lines", "imports", "leaks", "allocation_peak", "reconciliation"):
        data.pop(key)
    data["peak"].pop("attribution")
    cases["v1"] = Profile.from_dict(data)
    cases["bare"] = Profile(["python", "x.py"], ExitStatus(code=None), 0.0, CpuTimes(), Peak())
    for name, profile in cases.items():
        path = tmp_path / f"{name}.html"
        path.write_text(HtmlRenderer(cwd=FAKE_CWD).render(profile), encoding="utf-8")
        page = open_page(browser, path)
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280, name
        page.close()
