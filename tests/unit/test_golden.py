"""Golden files: the exact text of the reports for hand-built profiles.

The files in tests/golden/ are the specification of the reports: every figure in them was checked
by hand against the profiles below. After an intended change of a report, rewrite them with
``MEMGAUGE_UPDATE_GOLDEN=1 pytest tests/unit/test_golden.py`` (which then fails on purpose, so a
rewrite never passes unseen), review ``git diff tests/golden``, and run the tests again.

Every path is under FAKE_CWD, in a site-packages or standard library directory, or a
pseudo-file, so ``short_path`` shortens them the same on any machine whatever its home directory.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from memgauge.model._overhead import Overhead, OwnCpu
from memgauge.model._profile import (
    AllocationPeak,
    Attribution,
    CpuTimes,
    ExitStatus,
    ImportRecord,
    LeakSuspect,
    LineStats,
    Peak,
    PhaseRecord,
    ProcessRecord,
    Profile,
    Reconciliation,
    Timeline,
)
from memgauge.render import HtmlRenderer, MarkdownRenderer, TerminalRenderer
from memgauge.render._html_page import asset
from tests.golden_check import as_another_machine, check_golden

FAKE_CWD = "/home/u/proj"
KIB = 1 << 10
MIB = 1 << 20

TRAIN = f"{FAKE_CWD}/train.py"
FIT = f"{FAKE_CWD}/worker/fit.py"
PANDAS = f"{FAKE_CWD}/.venv/lib/python3.11/site-packages/pandas/io/parsers/readers.py"
THREADING = "/usr/lib/python3.11/threading.py"
# a '|' and backticks: neither may break a markdown table row or code span
PIPE_SOURCE = "table = load(path) | cache  # see `load`"


def rich_profile() -> Profile:
    """Every section of the reports populated."""
    return Profile(
        command=["python", "train.py", "--data", "big set.csv"],
        exit=ExitStatus(code=1),
        wall_seconds=12.5,
        cpu=CpuTimes(9.25, 0.75),
        peak=Peak(
            resident_bytes=768 * MIB,
            method="cgroup-v2 memory.peak",
            error_bound_bytes=256 * KIB,
            at_seconds=7.5,
            largest_process_bytes=600 * MIB,
            sampled_tree_bytes=760 * MIB,
            notes=["2 short-lived processes ended between samples: their memory may be missed"],
            attribution=[
                Attribution(100, TRAIN, 42, "main", 400 * MIB, source=PIPE_SOURCE),
                Attribution(101, FIT, 17, "fit", 120 * MIB, source="w = np.ones(n)"),
                Attribution(100, PANDAS, 1026, "read_csv", 96 * MIB, source="return _read(filepath, kwds)"),
                Attribution(100, TRAIN, 30, "main", 80 * MIB, source='df = pd.read_csv(path, sep="|")'),
                Attribution(100, "<startup>", 0, "interpreter start-up", 12 * MIB),
            ],
        ),
        processes=[
            ProcessRecord(
                100, 1, ["python", "train.py", "--data", "big set.csv"], 0.0, 12.5, 600 * MIB, 7.0, 0.5
            ),
            ProcessRecord(101, 100, ["python", "-m", "worker", "--id", "1"], 1.0, 11.0, 150 * MIB, 1.5, 0.15),
            ProcessRecord(102, 100, [], 2.0, 3.0, 20 * MIB, 0.75, 0.1),
        ],
        phases=[
            PhaseRecord("load", 100, 0.0, 3.0, 300 * MIB, 40 * MIB, 250 * MIB),
            PhaseRecord("parse", 100, 0.5, 2.0, 280 * MIB, 60 * MIB, 240 * MIB, depth=1, parent=0),
            PhaseRecord(
                "decode rows",
                100,
                1.0,
                1.5,
                200 * MIB,
                100 * MIB,
                190 * MIB,
                depth=2,
                parent=1,
                peak_exact=False,
            ),
            PhaseRecord("train", 100, 3.0, 12.5, 600 * MIB, 250 * MIB, 0, peak_exact=False, complete=False),
        ],
        timeline=Timeline(
            0.5,
            [0.0, 2.5, 5.0, 7.5, 10.0, 12.5],
            [40 * MIB, 300 * MIB, 500 * MIB, 760 * MIB, 700 * MIB, 650 * MIB],
        ),
        lines=[
            LineStats(100, TRAIN, 42, "main", 0.40, 2.10, 0.0, 350 * MIB, 250, PIPE_SOURCE),
            LineStats(
                100, TRAIN, 48, "main", 1.20, 0.30, 0.05, 12 * MIB, 155, "for batch in batches(table):"
            ),
            LineStats(
                100, TRAIN, 50, "<genexpr>", 0.90, 0.0, 0.0, 0, 90, "total = sum(x * w for x in batch)"
            ),
            LineStats(
                100, TRAIN, 50, "main", 0.50, 0.12, 0.0, 1 * MIB, 62, "total = sum(x * w for x in batch)"
            ),
            LineStats(100, TRAIN, 55, "main", 0.20, 0.40, 0.0, 60 * MIB, 60, "cache[key] = arr.copy()"),
            LineStats(100, TRAIN, 61, "load_batch", 0.05, 0.0, 2.40, 0, 245, "time.sleep(backoff)"),
            LineStats(
                100, TRAIN, 63, "load_batch", 0.30, 0.10, 0.80, -8 * MIB, 120, "data = sock.recv(1 << 20)"
            ),
            LineStats(101, FIT, 17, "fit", 0.15, 1.20, 0.0, 20 * MIB, 135, "w = np.ones(n)"),
            LineStats(101, FIT, 18, "fit", 0.70, 0.0, 0.05, 0, 75, "w += grad(w) * lr"),
            LineStats(101, FIT, 25, "fit", 0.02, 0.0, 1.50, 0, 152, "item = q.get()"),
            LineStats(102, FIT, 9, "setup", 0.55, 0.10, 0.0, 4 * MIB, 65, "model = build(cfg)"),
            LineStats(
                100, PANDAS, 1026, "read_csv", 0.25, 0.60, 0.0, 40 * MIB, 85, "return _read(filepath, kwds)"
            ),
            # a pool's idle thread: library code, so never listed under waiting
            LineStats(100, THREADING, 320, "wait", 0.0, 0.0, 5.0, 0, 500, "waiter.acquire()"),
        ],
        imports=[
            ImportRecord(100, "numpy", 0.05, 0.18, 22 * MIB, 0.15, 20 * MIB),
            ImportRecord(100, "pandas", 0.25, 0.42, 48 * MIB, 0.20, 30 * MIB),
            ImportRecord(100, "scipy", 0.70, 0.31, 35 * MIB, 0.29, 33 * MIB),
            ImportRecord(100, "json", 0.02, 0.004, 300 * KIB, 0.004, 300 * KIB),
            ImportRecord(100, "requests", 1.0, 0.095, 6 * MIB, 0.06, 4 * MIB),
            ImportRecord(101, "_pytest", 1.2, 0.05, 2 * MIB, 0.04, 1536 * KIB),
        ],
        leaks=[
            LeakSuspect(
                100, TRAIN, 55, "main", 4.5 * MIB, 45 * MIB, 2.0, 12.0, 0.98, "cache[key] = arr.copy()"
            ),
            LeakSuspect(
                101, FIT, 21, "fit", 300 * KIB, 2_900_000, 3.0, 11.0, 0.93, "history.append(w.copy())"
            ),
        ],
        allocation_peak=AllocationPeak(
            900 * MIB,
            {"100": 700 * MIB, "101": 200 * MIB},
            [
                Attribution(100, TRAIN, 42, "main", 640 * MIB, source=PIPE_SOURCE),
                Attribution(101, FIT, 17, "fit", 190 * MIB, source="w = np.ones(n)"),
                Attribution(100, TRAIN, 55, "main", 60 * MIB, source="cache[key] = arr.copy()"),
            ],
        ),
        reconciliation=[
            Reconciliation(
                100,
                600 * MIB,
                700 * MIB,
                30 * MIB,
                150 * MIB,
                20 * MIB,
                ["np.zeros pages never written stay unmapped"],
            ),
            Reconciliation(
                101,
                150 * MIB,
                200 * MIB,
                25 * MIB,
                80 * MIB,
                5 * MIB,
                ["freed blocks stay in the allocator's arenas"],
            ),
        ],
        started_at="2026-01-02T03:04:05+00:00",  # never shown: the reports have no clock in them
        memgauge_version="0.0.0-test",
    )


def minimal_profile() -> Profile:
    """A ``--no-lines`` run of one process: no lines, phases, imports, attribution or notes."""
    return Profile(
        command=["python", "-c", "x = bytearray(50_000_000)"],
        exit=ExitStatus(code=0),
        wall_seconds=0.42,
        cpu=CpuTimes(0.05, 0.09),
        peak=Peak(
            resident_bytes=60 * MIB,
            method="sampled tree sum + per-process VmHWM",
            at_seconds=0.31,
            largest_process_bytes=60 * MIB,
            sampled_tree_bytes=58 * MIB,
        ),
        processes=[
            ProcessRecord(4242, 1, ["python", "-c", "x = bytearray(50_000_000)"], 0.0, 0.42, 60 * MIB)
        ],
        timeline=Timeline(0.1, [0.0, 0.1, 0.2, 0.3, 0.4], [9 * MIB, 9 * MIB, 58 * MIB, 58 * MIB, 10 * MIB]),
    )


def with_overhead(profile: Profile) -> Profile:
    """``profile`` with the record of memgauge's own cost: the terminal's footer; the Markdown
    report and the page do not show it."""
    steps = {"start-up": 0.05, "set-up": 0.01, "bootstrap": 0.03, "shutdown": 0.02, "assembly": 0.04}
    cpu = [OwnCpu("memgauge process", 1, 0.08), OwnCpu("line sampler thread", 2, 0.015)]
    return dataclasses.replace(profile, overhead=Overhead(steps, cpu))


def with_needs(profile: Profile) -> Profile:
    """``profile`` with what its container needs: the headline, and the lines reconciling it."""
    needs = {
        "needs_bytes": 700 * MIB,
        "needs_method": "sampled working set",
        "needs_headroom_bytes": 30 * MIB,
        "needs_anon_bytes": 560 * MIB,
        "needs_file_bytes": 100 * MIB,
        "needs_shmem_bytes": 10 * MIB,
        "needs_at_seconds": 7.5,
        "page_cache_bytes": 48 * MIB,
        "includes_page_cache": True,
    }
    return dataclasses.replace(profile, peak=dataclasses.replace(profile.peak, **needs))


def page(profile: Profile) -> str:
    """The profile's page less its inlined stylesheet, Chart.js and page script: the same on every
    page, and not the report's."""
    html = HtmlRenderer(cwd=FAKE_CWD).render(profile)
    for name in ("report.css", "chart.umd.min.js", "report.js"):
        html = html.replace(asset(name), f"[{name}]")
    return html


CASES: dict[str, Callable[[], str]] = {
    "report-100.txt": lambda: TerminalRenderer(width=100, color=False, cwd=FAKE_CWD).render(rich_profile()),
    "report-60.txt": lambda: TerminalRenderer(width=60, color=False, cwd=FAKE_CWD).render(rich_profile()),
    "report.md": lambda: MarkdownRenderer(cwd=FAKE_CWD).render(rich_profile()),
    "minimal.txt": lambda: TerminalRenderer(width=100, color=False, cwd=FAKE_CWD).render(minimal_profile()),
    "minimal.md": lambda: MarkdownRenderer(cwd=FAKE_CWD).render(minimal_profile()),
    "report.html": lambda: page(rich_profile()),
    "minimal.html": lambda: page(minimal_profile()),
    "needs.html": lambda: page(with_needs(rich_profile())),
    "needs.md": lambda: MarkdownRenderer(cwd=FAKE_CWD).render(with_needs(rich_profile())),
    # the styles of every part (a note's yellow, a remark's dim) and the footer of memgauge's cost
    "report-color.txt": lambda: TerminalRenderer(width=100, color=True, cwd=FAKE_CWD).render(
        with_overhead(rich_profile())
    ),
    "minimal-overhead-60.txt": lambda: TerminalRenderer(width=60, color=False, cwd=FAKE_CWD).render(
        with_overhead(minimal_profile())
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name: str) -> None:
    check_golden(name, CASES[name]())


# NO_COLOR, which the other machine sets, takes the colours away
@pytest.mark.parametrize("name", sorted(n for n in CASES if "color" not in n))
def test_reports_do_not_depend_on_the_machine(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Another home directory, working directory and terminal give the same bytes."""
    as_another_machine(monkeypatch, tmp_path, "/home/u")
    check_golden(name, CASES[name]())


@pytest.mark.parametrize("name", ["report.md", "report.html", "minimal.md", "minimal.html"])
def test_only_the_terminal_shows_memgauge_s_own_cost(name: str) -> None:
    """The Markdown report and the page of a profile with the record are those without it."""
    profile = with_overhead(rich_profile() if name.startswith("report") else minimal_profile())
    render = page if name.endswith(".html") else MarkdownRenderer(cwd=FAKE_CWD).render
    check_golden(name, render(profile))
