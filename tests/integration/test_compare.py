"""``compare()`` and its renderers: exact figures over hand-built profiles, golden files, and one
comparison of two real runs with known peaks.

Golden files (tests/golden/compare*): every figure in them was checked by hand against the profiles
below. After an intended change, rewrite them with ``MEMGAUGE_UPDATE_GOLDEN=1 pytest
tests/integration/test_compare.py`` (which then fails on purpose), review ``git diff tests/golden``,
run again.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from memgauge.analysis import Comparison, ComparisonRow, LineComparison, PhaseComparison, compare
from memgauge.model._profile import (
    UNBOUNDED_NOTE,
    AllocationPeak,
    Attribution,
    CpuTimes,
    ExitStatus,
    Peak,
    PhaseRecord,
    Profile,
    load_profile,
)
from memgauge.render import (
    HtmlComparisonRenderer,
    MarkdownComparisonRenderer,
    TerminalComparisonRenderer,
    comparison_headline,
)
from memgauge.render._format import format_delta, format_figure, format_ratio, md_code, md_row, md_text
from memgauge.sections.torch import TorchMemory
from memgauge.sections.training import Training, TrainingStep, summarize_training
from tests.conftest import MIB, PROGRAMS
from tests.golden_check import as_another_machine, check_golden

FAKE_CWD = "/srv/proj"
TRAIN = f"{FAKE_CWD}/train.py"
MODELS = f"{FAKE_CWD}/models.py"
TORCH = f"{FAKE_CWD}/.venv/lib/python3.11/site-packages/torch/nn/functional.py"
# a '|' and backticks: neither may break a markdown table row or code span
W_SOURCE = "w = np.zeros((d, k))  # `w` | weights"


def _profile(
    *,
    command: list[str],
    wall: float,
    cpu: tuple[float, float],
    peak: int,
    largest: int,
    phases: list[PhaseRecord] | None = None,
    attribution: list[Attribution] | None = None,
    alloc: int | None = None,
    exit: ExitStatus | None = None,
    method: str = "cgroup-v2 memory.peak",
    notes: list[str] | None = None,
) -> Profile:
    return Profile(
        command=command,
        exit=exit or ExitStatus(code=0),
        wall_seconds=wall,
        cpu=CpuTimes(*cpu),
        peak=Peak(
            resident_bytes=peak,
            method=method,
            largest_process_bytes=largest,
            attribution=attribution or [],
            notes=notes or [],
        ),
        phases=phases or [],
        allocation_peak=None if alloc is None else AllocationPeak(bytes=alloc),
    )


def linear() -> Profile:
    """The baseline: two epochs; "augment" in two worker processes, one peak a lower bound; a
    "save" phase that took no time; the fit line in two processes."""
    return _profile(
        command=["python", "train.py", "--model", "linear"],
        wall=6.0,
        cpu=(4.5, 0.5),
        peak=500 * MIB,
        largest=400 * MIB,
        phases=[
            PhaseRecord("load", 100, 0.0, 1.5, 300 * MIB),
            PhaseRecord("epoch", 100, 1.5, 3.0, 420 * MIB),
            PhaseRecord("augment", 101, 2.0, 2.5, 80 * MIB),
            PhaseRecord("augment", 102, 2.0, 3.0, 90 * MIB, peak_exact=False),
            PhaseRecord("epoch", 100, 3.0, 4.5, 450 * MIB),
            PhaseRecord("save", 100, 5.0, 5.0, 200 * MIB),
        ],
        attribution=[
            Attribution(100, TRAIN, 30, "main", 200 * MIB, source="X = load(path)"),
            Attribution(100, MODELS, 12, "fit", 150 * MIB, source=W_SOURCE),
            Attribution(101, MODELS, 12, "fit", 50 * MIB, source=W_SOURCE),
            Attribution(100, "<startup>", 0, "interpreter start-up", 12 * MIB),
        ],
    )


def mlp() -> Profile:
    """Three epochs, a nested "forward" phase the baseline lacks, the fit line moved to line 14,
    lines the baseline lacks (one in a library, without source), an allocation peak."""
    return _profile(
        command=["python", "train.py", "--model", "mlp"],
        wall=9.0,
        cpu=(7.0, 0.5),
        peak=600 * MIB,
        largest=520 * MIB,
        phases=[
            PhaseRecord("load", 100, 0.0, 1.5, 300 * MIB),
            PhaseRecord("epoch", 100, 1.5, 3.5, 500 * MIB),
            PhaseRecord("forward", 100, 2.0, 2.5, 505 * MIB, depth=1, parent=1),
            PhaseRecord("augment", 101, 2.0, 2.5, 80 * MIB),
            PhaseRecord("epoch", 100, 3.5, 5.5, 520 * MIB),
            PhaseRecord("epoch", 100, 5.5, 7.5, 510 * MIB),
            PhaseRecord("save", 100, 7.5, 7.75, 210 * MIB),
        ],
        attribution=[
            Attribution(100, MODELS, 14, "fit", 300 * MIB, source=W_SOURCE),
            Attribution(100, TRAIN, 30, "main", 200 * MIB, source="X = load(path)"),
            Attribution(100, MODELS, 40, "forward", 60 * MIB, source="h = torch.relu(x @ w1)"),
            Attribution(100, TORCH, 1500, "relu", 20 * MIB),
            Attribution(100, "<startup>", 0, "interpreter start-up", 12 * MIB),
        ],
        alloc=480 * MIB,
    )


def mlp_fixed() -> Profile:
    """The third column: killed, measured by sampling, phases "augment" and "forward" missing,
    the fit line moved again (to 20) and the load line by one (to 31)."""
    return _profile(
        command=["python", "train.py", "--model", "mlp", "--chunked"],
        wall=8.0,
        cpu=(6.0, 0.5),
        peak=450 * MIB,
        largest=380 * MIB,
        phases=[
            PhaseRecord("load", 100, 0.0, 1.0, 250 * MIB),
            PhaseRecord("epoch", 100, 1.0, 2.5, 400 * MIB),
            PhaseRecord("epoch", 100, 2.5, 4.0, 410 * MIB),
            PhaseRecord("epoch", 100, 4.0, 5.5, 405 * MIB),
            PhaseRecord("save", 100, 6.0, 6.5, 200 * MIB),
        ],
        attribution=[
            Attribution(100, MODELS, 20, "fit", 100 * MIB, source=W_SOURCE),
            Attribution(101, MODELS, 20, "fit", 100 * MIB, source=W_SOURCE),
            Attribution(100, TRAIN, 31, "main", 150 * MIB, source="X = load(path)"),
            Attribution(100, "<startup>", 0, "interpreter start-up", 12 * MIB),
        ],
        alloc=300 * MIB,
        exit=ExitStatus(code=None, signal=9, signal_name="SIGKILL"),
        method="sampled tree sum + per-process VmHWM",
    )


def two() -> Comparison:
    return compare([linear(), mlp()], ["linear", "mlp"], cwd=FAKE_CWD)


def three() -> Comparison:
    return compare([linear(), mlp(), mlp_fixed()], ["linear", "mlp", "mlp-fixed"], cwd=FAKE_CWD)


def _phase(c: Comparison, name: str) -> PhaseComparison:
    return next(p for p in c.phases if p.name == name)


def _line(c: Comparison, file: str, function: str) -> LineComparison:
    return next(line for line in c.lines if line.file == file and line.function == function)


# --- compare(): exact figures ---------------------------------------------------------------------


def test_summary_values_deltas_and_ratios() -> None:
    c = two()
    assert c.names == ("linear", "mlp") and c.baseline == "linear"
    assert [r.key for r in c.summary] == [
        "resident_peak",
        "largest_process",
        "allocation_peak",
        "wall",
        "cpu",
    ]
    assert [r.unit for r in c.summary] == ["bytes", "bytes", "bytes", "seconds", "seconds"]
    peak = c.row("resident_peak")
    assert peak.values == (500 * MIB, 600 * MIB)
    assert peak.deltas == (100 * MIB,)
    assert peak.ratios == (1.2,)
    largest = c.row("largest_process")
    assert largest.deltas == (120 * MIB,) and largest.ratios == (1.3,)
    wall = c.row("wall")
    assert wall.values == (6.0, 9.0) and wall.deltas == (3.0,) and wall.ratios == (1.5,)
    cpu = c.row("cpu")
    assert cpu.values == (5.0, 7.5) and cpu.deltas == (2.5,) and cpu.ratios == (1.5,)
    assert c.exit == ("exit 0", "exit 0")
    assert c.commands[1] == ("python", "train.py", "--model", "mlp")
    with pytest.raises(KeyError):
        c.row("nonsense")


def test_missing_values_are_none_and_so_are_their_deltas_and_ratios() -> None:
    c = two()
    alloc = c.row("allocation_peak")
    assert alloc.values == (None, 480 * MIB)
    assert alloc.deltas == (None,) and alloc.ratios == (None,)
    assert c.notes == ("linear has no allocation peak (recorded without --alloc)",)
    # the other way round: a missing value in a non-baseline column
    back = compare([mlp(), linear()], ["mlp", "linear"])
    assert back.row("allocation_peak").values == (480 * MIB, None)
    assert back.row("allocation_peak").deltas == (None,) and back.row("allocation_peak").ratios == (None,)


def test_baseline_zero_gives_a_delta_but_no_ratio() -> None:
    save = _phase(two(), "save")
    assert save.duration.values == (0.0, 0.25)
    assert save.duration.deltas == (0.25,)
    assert save.duration.ratios == (None,)
    row = ComparisonRow("x", "x", "bytes", (0, 0, 5))
    assert row.deltas == (0, 5) and row.ratios == (None, None)
    # a figure of 0 against a baseline that is not: ratio 0, not None
    assert ComparisonRow("x", "x", "bytes", (4, 0)).ratios == (0.0,)


def test_phases_aggregate_by_name_over_repeats_and_processes() -> None:
    c = two()
    # the baseline's order of first appearance, then the names only the others have
    assert [p.name for p in c.phases] == ["load", "epoch", "augment", "save", "forward"]
    epoch = _phase(c, "epoch")
    assert epoch.count.values == (2, 3) and epoch.count.deltas == (1,) and epoch.count.ratios == (1.5,)
    assert epoch.peak.values == (450 * MIB, 520 * MIB) and epoch.peak.deltas == (70 * MIB,)
    assert epoch.duration.values == (3.0, 6.0) and epoch.duration.ratios == (2.0,)
    augment = _phase(c, "augment")
    # pid 101 and pid 102: two runs, the higher peak (a lower bound), their times added
    assert augment.count.values == (2, 1)
    assert augment.peak.values == (90 * MIB, 80 * MIB)
    assert augment.peak.lower_bounds == (True, False)
    assert augment.peak.deltas == (-10 * MIB,)
    assert augment.duration.values == (1.5, 0.5)
    forward = _phase(c, "forward")
    assert forward.depth == 1
    assert forward.peak.values == (None, 505 * MIB) and forward.peak.deltas == (None,)
    assert forward.count.values == (None, 1) and forward.duration.values == (None, 0.5)
    assert forward.peak.lower_bounds == (False, False)
    assert epoch.rows == (epoch.peak, epoch.duration, epoch.count)


def test_phase_order_follows_start_times_not_record_order() -> None:
    a = _profile(
        command=["a"],
        wall=1.0,
        cpu=(0.5, 0.0),
        peak=MIB,
        largest=MIB,
        phases=[PhaseRecord("late", 2, 0.5, 0.6, MIB), PhaseRecord("early", 1, 0.1, 0.2, MIB)],
    )
    b = _profile(
        command=["b"],
        wall=1.0,
        cpu=(0.5, 0.0),
        peak=MIB,
        largest=MIB,
        phases=[PhaseRecord("new", 1, 0, 1, 0)],
    )
    assert [p.name for p in compare([a, b], ["a", "b"]).phases] == ["early", "late", "new"]


def test_lines_match_by_source_when_line_numbers_shift() -> None:
    c = two()
    assert [(line.file, line.function) for line in c.lines] == [
        ("models.py", "fit"),
        ("train.py", "main"),
        ("models.py", "forward"),
        ("torch/nn/functional.py", "relu"),
        ("<startup>", "interpreter start-up"),
    ]
    fit = _line(c, "models.py", "fit")
    # line 12 in two processes in the baseline (summed), line 14 in the other
    assert fit.lines == (12, 14)
    assert fit.location == "models.py:12→14"
    assert fit.source == W_SOURCE
    assert fit.held.values == (200 * MIB, 300 * MIB)
    assert fit.held.deltas == (100 * MIB,) and fit.held.ratios == (1.5,)
    load = _line(c, "train.py", "main")
    assert load.location == "train.py:30" and load.held.ratios == (1.0,)
    forward = _line(c, "models.py", "forward")
    assert forward.held.values == (None, 60 * MIB) and forward.held.deltas == (None,)
    assert forward.lines == (None, 40)
    startup = _line(c, "<startup>", "interpreter start-up")
    assert startup.location == "<startup>" and startup.held.values == (12 * MIB, 12 * MIB)


def test_lines_without_source_match_by_line_number_only() -> None:
    def one(line: int, function: str) -> Profile:
        return _profile(
            command=["x"],
            wall=1.0,
            cpu=(0.0, 0.0),
            peak=MIB,
            largest=MIB,
            attribution=[Attribution(1, TORCH, line, function, MIB)],
        )

    same = compare([one(7, "relu"), one(7, "relu")], ["a", "b"], cwd=FAKE_CWD)
    assert len(same.lines) == 1 and same.lines[0].held.values == (MIB, MIB)
    moved = compare([one(7, "relu"), one(9, "relu")], ["a", "b"], cwd=FAKE_CWD)
    assert [line.held.values for line in moved.lines] == [(MIB, None), (None, MIB)]
    # source text matches within its function only: the same text elsewhere is another line
    a = one(7, "relu")
    a.peak.attribution = [Attribution(1, MODELS, 5, "f", MIB, source="x = g()")]
    b = one(7, "relu")
    b.peak.attribution = [Attribution(1, MODELS, 5, "h", MIB, source="  x = g()  ")]
    assert len(compare([a, b], ["a", "b"], cwd=FAKE_CWD).lines) == 2
    b.peak.attribution[0].function = "f"  # and surrounding blanks do not count
    assert len(compare([a, b], ["a", "b"], cwd=FAKE_CWD).lines) == 1


def test_lines_ranked_by_their_largest_value_and_capped() -> None:
    c = compare([linear(), mlp()], ["linear", "mlp"], cwd=FAKE_CWD, max_lines=2)
    assert [line.location for line in c.lines] == ["models.py:12→14", "train.py:30"]
    assert compare([linear(), mlp()], ["a", "b"], max_lines=0).lines == ()
    # a tie keeps the order of first appearance, baseline first
    base = linear()
    base.peak.attribution = [
        base.peak.attribution[0],
        Attribution(100, MODELS, 12, "fit", 200 * MIB, source=W_SOURCE),
    ]
    other = linear()
    other.peak.attribution = list(reversed(base.peak.attribution))
    tied = compare([base, other], ["a", "b"], cwd=FAKE_CWD)
    assert [line.file for line in tied.lines] == ["train.py", "models.py"]


def test_three_profiles() -> None:
    c = three()
    peak = c.row("resident_peak")
    assert peak.values == (500 * MIB, 600 * MIB, 450 * MIB)
    assert peak.deltas == (100 * MIB, -50 * MIB)
    assert peak.ratios == (1.2, 0.9)
    assert c.row("allocation_peak").values == (None, 480 * MIB, 300 * MIB)
    assert c.row("allocation_peak").ratios == (None, None)
    assert c.row("wall").ratios == (1.5, 8.0 / 6.0)
    assert c.exit == ("exit 0", "exit 0", "killed by SIGKILL")
    augment = _phase(c, "augment")
    assert augment.peak.values == (90 * MIB, 80 * MIB, None)
    assert augment.peak.deltas == (-10 * MIB, None)
    assert augment.peak.lower_bounds == (True, False, False)
    save = _phase(c, "save")
    assert save.duration.deltas == (0.25, 0.5) and save.duration.ratios == (None, None)
    fit = _line(c, "models.py", "fit")
    assert fit.lines == (12, 14, 20) and fit.location == "models.py:12→14→20"
    assert fit.held.values == (200 * MIB, 300 * MIB, 200 * MIB)
    assert fit.held.ratios == (1.5, 1.0)
    assert _line(c, "train.py", "main").location == "train.py:30→31"
    assert _line(c, "models.py", "forward").held.values == (None, 60 * MIB, None)
    assert c.notes == (
        "the resident peaks were measured differently (linear: cgroup-v2 memory.peak; mlp: cgroup-v2 "
        "memory.peak; mlp-fixed: sampled tree sum + per-process VmHWM): some of the difference may come "
        "from that",
        "linear has no allocation peak (recorded without --alloc)",
    )


def test_lower_bound_resident_peak_and_missing_attribution() -> None:
    a = linear()
    a.peak.notes = [UNBOUNDED_NOTE]
    b = mlp()
    b.peak.attribution = []
    c = compare([a, b], ["a", "b"])
    assert c.row("resident_peak").lower_bounds == (True, False)
    assert c.row("resident_peak").is_lower_bound(0) and not c.row("wall").is_lower_bound(0)
    assert "b has no lines holding its resident peak (recorded with --no-lines?)" in c.notes
    assert all(line.held.values[1] is None for line in c.lines)


def test_exit_texts() -> None:
    ends = [
        ExitStatus(code=3),
        ExitStatus(code=None),
        ExitStatus(code=None, signal=15, signal_name="SIGTERM"),
        ExitStatus(code=None, signal=9, signal_name="SIGKILL", oom_killed=True),
        ExitStatus(code=None, signal=40),
    ]
    profiles = [linear() for _ in ends]
    for p, end in zip(profiles, ends, strict=True):
        p.exit = end
    c = compare(profiles, [str(i) for i in range(len(ends))])
    assert c.exit == (
        "exit 3",
        "in-process",
        "killed by SIGTERM",
        "killed by the OOM killer",
        "killed by signal 40",
    )


@pytest.mark.parametrize(
    ("count", "names", "kw", "message"),
    [
        (1, ["a"], {}, "at least 2 profiles, got 1"),
        (0, [], {}, "at least 2 profiles, got 0"),
        (2, ["a"], {}, "1 names for 2 profiles"),
        (2, ["a", "b", "c"], {}, "3 names for 2 profiles"),
        (2, ["a", "b"], {"max_lines": -1}, "max_lines must be >= 0"),
    ],
)
def test_invalid_arguments_raise_value_error(
    count: int, names: list[str], kw: dict[str, int], message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        compare([linear() for _ in range(count)], names, **kw)


def test_to_dict_is_plain_json() -> None:
    c = three()
    data = json.loads(json.dumps(c.to_dict(), allow_nan=False))
    assert data["names"] == ["linear", "mlp", "mlp-fixed"] and data["baseline"] == "linear"
    assert data["exit"] == ["exit 0", "exit 0", "killed by SIGKILL"]
    peak = data["summary"][0]
    assert peak == {
        "key": "resident_peak",
        "label": "resident peak",
        "unit": "bytes",
        "values": [500 * MIB, 600 * MIB, 450 * MIB],
        "deltas": [100 * MIB, -50 * MIB],
        "ratios": [1.2, 0.9],
        "lower_bounds": [False, False, False],
    }
    assert data["summary"][2]["values"] == [None, 480 * MIB, 300 * MIB]
    augment = next(p for p in data["phases"] if p["name"] == "augment")
    assert augment["count"]["values"] == [2, 1, None] and augment["peak"]["lower_bounds"] == [
        True,
        False,
        False,
    ]
    fit = data["lines"][0]
    assert fit["file"] == "models.py" and fit["lines"] == [12, 14, 20] and fit["source"] == W_SOURCE
    assert fit["held"]["values"] == [200 * MIB, 300 * MIB, 200 * MIB]
    assert len(data["notes"]) == 2


def test_comparison_is_immutable() -> None:
    c = two()
    with pytest.raises(AttributeError):
        c.names = ("x", "y")  # type: ignore[misc]


# --- formatting -----------------------------------------------------------------------------------


def test_cell_formats() -> None:
    assert format_figure(None, "bytes") == "—"
    assert format_figure(612 * MIB, "bytes") == "612 MiB"
    assert format_figure(90 * MIB, "bytes", lower_bound=True) == "90.0 MiB ≥"
    assert format_figure(1.5, "seconds") == "1.50 s"
    assert format_figure(3, "count") == "3"
    assert format_delta(None, "seconds") == "—"
    assert format_delta(100 * MIB, "bytes") == "+100 MiB"
    assert format_delta(-10 * MIB, "bytes") == "-10.0 MiB"
    assert format_delta(0, "bytes") == "0 B"
    assert format_delta(3.1, "seconds") == "+3.10 s"
    assert format_delta(-0.25, "seconds") == "-250 ms"
    assert format_delta(0.0, "seconds") == "0 s"
    assert format_delta(2, "count") == "+2"
    assert format_delta(-1, "count") == "-1"
    assert format_delta(0, "count") == "0"
    assert format_ratio(None) == "—"
    assert format_ratio(1.2) == "1.20x"
    assert format_ratio(8.0 / 6.0) == "1.33x"


def test_headline() -> None:
    assert comparison_headline(two()) == "mlp vs linear: resident peak +100 MiB (1.20x), wall +3.00 s (1.50x)"
    assert comparison_headline(three()) == (
        "mlp vs linear: resident peak +100 MiB (1.20x), wall +3.00 s (1.50x); "
        "mlp-fixed vs linear: resident peak -50.0 MiB (0.90x), wall +2.00 s (1.33x)"
    )
    zero = linear()
    zero.wall_seconds = 0.0
    assert comparison_headline(compare([zero, mlp()], ["a", "b"])).endswith("wall +9.00 s")


def test_markdown_escapes() -> None:
    # '|' is escaped where GFM splits at it, in a table row, code spans included
    assert md_text("a|b `c` *d* <e> _f_ & [g]") == r"a|b \`c\` \*d\* \<e\> \_f\_ \& \[g\]"
    assert md_row([md_text("a|b"), md_code("a | b")]) == r"| a\|b | `a \| b` |"
    assert md_text("two\nlines") == "two lines"
    assert md_code("x = 1") == "`x = 1`"
    assert md_code("see `load`") == "`` see `load` ``"
    assert md_code("``x`` y") == "``` ``x`` y ```"
    assert md_code("") == ""


def test_markdown_names_and_sources_cannot_break_a_table() -> None:
    """Parsed as GFM (markdown-it, which rich depends on): every row has its header's cells, and
    names and sources read back as written."""
    from markdown_it import MarkdownIt

    a, b = linear(), mlp()
    source = "x = a | b  # `|` *not emphasis*"
    b.peak.attribution[0].source = source
    names = ["base|line", "new_one <b>"]
    text = MarkdownComparisonRenderer().render(compare([a, b], names, cwd=FAKE_CWD))
    tokens = MarkdownIt("gfm-like").parse(text)
    rows: list[list[str]] = []
    for i, tok in enumerate(tokens):
        if tok.type == "tr_open":
            rows.append([])
        elif tok.type in ("th_open", "td_open"):
            inline = tokens[i + 1]
            children = inline.children or []
            rows[-1].append("".join(c.content for c in children if c.type in ("text", "code_inline")))
    widths = {len(row) for row in rows}
    assert widths == {3, 5, 6}, widths  # profiles; summary; phases and lines
    assert ["profile", "exit", "command"] in rows
    assert [names[0] + " (baseline)", "exit 0", "python train.py --model linear"] in rows
    assert ["", names[0], names[1], f"Δ {names[1]}", f"ratio {names[1]}"] in rows
    assert any(row[:2] == ["models.py:14", source] for row in rows)
    assert "<b>" not in MarkdownIt("gfm-like").render(text)


@pytest.mark.parametrize("width", [80, 100, 120])
@pytest.mark.parametrize("make", [two, three])
def test_terminal_fits_its_width(width: int, make: Callable[[], Comparison]) -> None:
    text = TerminalComparisonRenderer(width=width).render(make())
    assert max(len(line) for line in text.splitlines()) <= width
    assert text == "".join(line.rstrip() + "\n" for line in text.splitlines())  # no trailing blanks


def test_terminal_color_has_the_same_text() -> None:
    plain = TerminalComparisonRenderer(width=100).render(three())
    colored = TerminalComparisonRenderer(width=100, color=True).render(three())
    assert "\x1b[" in colored and "\x1b[" not in plain
    assert re.sub(r"\x1b\[[0-9;]*m", "", colored) == plain


def test_sections_without_data_are_left_out() -> None:
    a = _profile(command=["a"], wall=1.0, cpu=(0.5, 0.0), peak=10 * MIB, largest=10 * MIB)
    b = _profile(command=["b"], wall=2.0, cpu=(1.0, 0.0), peak=20 * MIB, largest=20 * MIB)
    c = compare([a, b], ["a", "b"])
    text = TerminalComparisonRenderer().render(c)
    assert "phases" not in text and "held by" not in text and "allocation peak" not in text
    assert "resident peak    10.0 MiB  20.0 MiB  +10.0 MiB  2.00x" in text
    md = MarkdownComparisonRenderer().render(c)
    assert "### Phases" not in md and "### Resident peak held by" not in md and "allocation peak" not in md
    assert "| resident peak | 10.0 MiB | 20.0 MiB | +10.0 MiB | 2.00x |" in md


# --- golden files ---------------------------------------------------------------------------------


def _torch(params: int) -> TorchMemory:
    roles = {"parameters": params, "gradients": params, "activations": 3 * MIB}
    return TorchMemory(mode="summary", pid=1, peak_bytes=sum(roles.values()), peak_by_role=roles)


def _training(seconds: list[float]) -> Training:
    """A slow first step (warm-up), then ``seconds``, each waiting a tenth of its time."""
    rows, end = [], 0.0
    for i, s in enumerate([10 * seconds[0], *seconds]):
        end += s
        rows.append(TrainingStep(i, end, s, wait_seconds=s / 10, samples=8, kind="optimizer"))
    return summarize_training(rows, fetches=len(rows))


def with_sections() -> Comparison:
    """Two runs with the torch and training sections' parts, a third with neither."""
    small = mlp()
    small.torch, small.training = _torch(10 * MIB), _training([0.5, 0.52, 0.48, 0.5] * 5)
    large = mlp_fixed()
    large.torch, large.training = _torch(40 * MIB), _training([0.25, 0.26, 0.24, 0.25] * 5)
    return compare([small, large, linear()], ["small", "large", "plain"], cwd=FAKE_CWD)


def _page_body(page: str) -> str:
    """The page without its stylesheet and scripts (the assets, which change on their own): its
    header, sections and data."""
    return page[page.index("<body>") : page.index("<script>\n")]


CASES: dict[str, Callable[[], str]] = {
    "compare-100.txt": lambda: TerminalComparisonRenderer(width=100).render(two()),
    "compare.md": lambda: MarkdownComparisonRenderer().render(two()),
    "compare3-100.txt": lambda: TerminalComparisonRenderer(width=100).render(three()),
    "compare3.md": lambda: MarkdownComparisonRenderer().render(three()),
    "compare-60.txt": lambda: TerminalComparisonRenderer(width=60).render(two()),
    "compare3-60.txt": lambda: TerminalComparisonRenderer(width=60).render(three()),
    "compare.html": lambda: _page_body(HtmlComparisonRenderer().render(two())),
    "compare3.html": lambda: _page_body(HtmlComparisonRenderer().render(three())),
    "compare-sections-100.txt": lambda: TerminalComparisonRenderer(width=100).render(with_sections()),
    "compare-sections-60.txt": lambda: TerminalComparisonRenderer(width=60).render(with_sections()),
    "compare-sections.md": lambda: MarkdownComparisonRenderer().render(with_sections()),
    "compare-sections.html": lambda: _page_body(HtmlComparisonRenderer().render(with_sections())),
    # the colours: a worse figure red, a better one green, an exit by how it ended
    "compare3-color.txt": lambda: TerminalComparisonRenderer(width=100, color=True).render(three()),
    "compare-sections-color.txt": lambda: TerminalComparisonRenderer(width=100, color=True).render(
        with_sections()
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name: str) -> None:
    check_golden(name, CASES[name]())


# NO_COLOR (another machine's) drops the colours, as it should
@pytest.mark.parametrize("name", sorted(n for n in CASES if "color" not in n))
def test_golden_does_not_depend_on_the_machine(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Another home directory, working directory and terminal give the same bytes."""
    as_another_machine(monkeypatch, tmp_path, "/srv")
    check_golden(name, CASES[name]())


# --- two real runs --------------------------------------------------------------------------------


def test_real_runs_differ_by_the_known_spike(tmp_path: Path) -> None:
    """spike.py holds SPIKE_MIB MiB (every page written) at its peak: 300 against 100 MiB must
    compare as about +200 MiB, whatever the interpreter's own baseline."""
    paths = []
    for mib in (100, 300):
        out = tmp_path / f"spike-{mib}.json"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "memgauge",
                "run",
                "--no-lines",
                "--json",
                str(out),
                str(PROGRAMS / "spike.py"),
            ],
            capture_output=True,
            text=True,
            env={**os.environ, "SPIKE_MIB": str(mib)},
            cwd=tmp_path,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        paths.append(out)
    c = compare([load_profile(p) for p in paths], ["small", "big"])
    for key in ("container_needs", "resident_peak", "largest_process"):
        row = c.row(key)
        delta, ratio = row.deltas[0], row.ratios[0]
        assert delta is not None and ratio is not None
        # 200 MiB apart, give or take 20 MiB of run-to-run noise (page cache, allocator, sampling)
        assert 180 * MIB <= delta <= 220 * MIB, (key, row.values)
        # (100 + b + delta) / (100 + b) for a baseline b of 0 to 100 MiB (the interpreter, and what
        # the cgroup charges it) and the delta's bounds above
        assert 1.9 <= ratio <= 3.2, (key, row.values)
        assert ratio == row.values[1] / row.values[0]  # type: ignore[operator]
    assert c.exit == ("exit 0", "exit 0")
    text = TerminalComparisonRenderer().render(c)
    # the pair's headline is what `memgauge run` leads with: what a container needs
    assert "big vs small: container needs +" in text
