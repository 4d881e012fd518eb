"""Advice (``memgauge.analysis.advise``): every rule on hand-built profiles with exact figures, just
above and just below its thresholds, then on real runs of programs whose answer is known by
construction (tests/programs/advice_*.py)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest

from memgauge import Profile
from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import Advice, Evidence, advise
from memgauge.model._profile import (
    Attribution,
    HeldLine,
    ImportRecord,
    LineStats,
    ProcessSeries,
    Timeline,
)
from tests import factories
from tests.conftest import MIB, PROGRAMS, marker, run_memgauge

CWD = "/home/u/proj"
LOAD = f"{CWD}/load.py"
WORK = f"{CWD}/work.py"
SERVE = f"{CWD}/serve.py"


def make_profile(
    *,
    peaks: dict[int, int] | None = None,
    wall: float = 10.0,
    cpu: tuple[float, float] = (8.0, 1.0),
    **fields: Any,
) -> Profile:
    """A run of ``wall`` seconds using ``cpu`` (user, system) seconds, its processes peaking at
    ``peaks`` (pid -> resident bytes; the tree's peak is their sum)."""
    peaks = {1: 1000 * MIB} if peaks is None else peaks
    return factories.make_profile(peaks=peaks, wall=wall, cpu=cpu, method="test", **fields)


def held(file: str, line: int, size: int, source: str, *, pid: int = 1, function: str = "f") -> Attribution:
    return factories.held(file, line, size, source=source, pid=pid, function=function)


def ran(
    file: str,
    line: int,
    *,
    growth: int = 0,
    wait: float = 0.0,
    cpu: float = 0.0,
    pid: int = 1,
    function: str = "f",
) -> LineStats:
    return factories.ran(file, line, pid=pid, function=function, py=cpu, wait=wait, growth=growth, samples=10)


def imported(package: str, size: int, seconds: float = 0.01, *, pid: int = 1) -> ImportRecord:
    return ImportRecord(
        pid=pid,
        package=package,
        start_seconds=0.0,
        seconds=seconds,
        resident_bytes=size,
        self_seconds=seconds,
        self_resident_bytes=size,
    )


def evidence(advice: Advice) -> dict[str, str]:
    return {e.label: e.value for e in advice.evidence}


def only(found: list[Advice], kind: str) -> Advice:
    assert [a.kind for a in found] == [kind], found
    return found[0]


# --- file-io ------------------------------------------------------------------------------------


def test_whole_csv_read_holding_30_percent_of_the_peak() -> None:
    p = make_profile(attribution=[held(LOAD, 12, 300 * MIB, "df = pd.read_csv(path)")])
    a = only(advise(p, CWD), "file-io")
    assert a.where == "load.py:12"
    assert a.title == "A file parsed by read_csv() makes 30% of the peak"
    assert "Parquet" in a.detail
    assert a.evidence == (
        Evidence("held at the peak", "300 MiB"),
        Evidence("process peak", "1000 MiB"),
        Evidence("share", "30%"),
    )
    assert evidence(a)["held at the peak"] == format_bytes(300 * MIB)


def test_file_read_below_10_percent_or_16_mib_is_not_advised() -> None:
    source = "df = pd.read_csv(path)"
    assert advise(make_profile(attribution=[held(LOAD, 12, 90 * MIB, source)]), CWD) == []  # 9%
    # a fifth of a small process's peak, but under 16 MiB
    small = {1: 80 * MIB}
    assert advise(make_profile(peaks=small, attribution=[held(LOAD, 12, 16 * MIB - 1, source)]), CWD) == []
    a = only(
        advise(make_profile(peaks=small, attribution=[held(LOAD, 12, 16 * MIB, source)]), CWD), "file-io"
    )
    assert evidence(a) == {"held at the peak": "16.0 MiB", "process peak": "80.0 MiB", "share": "20%"}
    assert only(advise(make_profile(attribution=[held(LOAD, 12, 101 * MIB, source)]), CWD), "file-io")


@pytest.mark.parametrize(
    ("source", "call"),
    [
        ("df = pd.read_csv(path)", "read_csv"),
        ("df = pl.read_csv (path)", "read_csv"),
        ("t = pd.read_table(p, sep='\\t')", "read_table"),
        ("j = pd.read_json(p, lines=True)", "read_json"),
        ("a = np.loadtxt(p)", "loadtxt"),
        ("a = np.genfromtxt(p, delimiter=',')", "genfromtxt"),
        ("rows = list(csv.reader(f))", "csv.reader"),
        ("rows = list(csv.DictReader(f))", "csv.DictReader"),
        ("data = json.load(f)", "json.load"),
        ("data = json.loads(f.read())", "json.loads"),
    ],
)
def test_text_reads_are_named_by_their_call(source: str, call: str) -> None:
    a = only(advise(make_profile(attribution=[held(LOAD, 3, 500 * MIB, source)]), CWD), "file-io")
    assert a.title == f"A file parsed by {call}() makes 50% of the peak"


@pytest.mark.parametrize(
    ("source", "call"),
    [
        ("model = pickle.load(f)", "pickle.load"),
        ("obj = pickle.loads(blob)", "pickle.loads"),
        ("df = pd.read_pickle(path)", "read_pickle"),
        ("model = joblib.load('model.joblib')", "joblib.load"),
        ("state = torch.load(path, map_location='cpu')", "torch.load"),
        ("obj = dill.load(f)", "dill.load"),
    ],
)
def test_unpickling_is_told_apart_from_parsing_text(source: str, call: str) -> None:
    a = only(advise(make_profile(attribution=[held(LOAD, 3, 500 * MIB, source)]), CWD), "file-io")
    assert a.title == f"An unpickled object ({call}()) makes 50% of the peak"
    assert "memory-mapped" in a.detail
    assert evidence(a) == {"held at the peak": "500 MiB", "process peak": "1000 MiB", "share": "50%"}


@pytest.mark.parametrize(
    "source",
    [
        # a function of the program's own is not known to read a whole file: `_` is a word
        # character, so `\b` does not match inside `my_read_csv` or before `_custom`
        "df = my_read_csv(path)",
        "df = read_csv_custom(path)",
        "df = pd.read_csv_lazy(path)",
        "data = myjson.load(f)",
        "data = orjson.loads(text)",
        "obj = cloudpickle.load(f)",
        "pickle.dump(obj, f)",
        "text = json.dumps(obj)",
        "a = np.load(path, mmap_mode='r')",
        "df = pd.read_csv",  # a reference, not a call
        "",
    ],
)
def test_names_that_only_look_like_a_file_read_are_not_advised(source: str) -> None:
    assert advise(make_profile(attribution=[held(LOAD, 3, 500 * MIB, source)]), CWD) == []


def test_a_file_read_is_measured_against_its_own_processs_peak() -> None:
    # 40 MiB is 4% of the tree's peak but 40% of the worker's own
    p = make_profile(
        peaks={1: 1000 * MIB, 2: 100 * MIB},
        attribution=[held(LOAD, 7, 40 * MIB, "df = pd.read_parquet(p) if p else pd.read_csv(q)", pid=2)],
    )
    a = only(advise(p, CWD), "file-io")
    assert evidence(a) == {"held at the peak": "40.0 MiB", "process peak": "100 MiB", "share": "40%"}


def test_a_line_charged_under_two_functions_is_advised_once_with_their_sum() -> None:
    # `pd.concat(pd.read_csv(f) for f in files)`: the reads run in the generator expression's own
    # code object, the concatenation in the function's, both on line 9
    source = "df = pd.concat(pd.read_csv(f) for f in files)"
    p = make_profile(
        attribution=[
            held(LOAD, 9, 300 * MIB, source, function="load"),
            held(LOAD, 9, 200 * MIB, source, function="<genexpr>"),
        ]
    )
    a = only(advise(p, CWD), "file-io")
    assert a.where == "load.py:9"
    assert evidence(a) == {"held at the peak": "500 MiB", "process peak": "1000 MiB", "share": "50%"}


# --- imports ------------------------------------------------------------------------------------


def test_imports_making_most_of_the_peak() -> None:
    p = make_profile(
        peaks={1: 200 * MIB},
        imports=[
            imported("numpy", 20 * MIB, 0.10),
            imported("torch", 120 * MIB, 0.15),
            imported("six", 2 * MIB, 0.01),
            imported("yaml", 8 * MIB, 0.04),
        ],
    )
    a = only(advise(p, CWD), "imports")
    assert a.where is None
    assert a.title == "Imports make 75% of process 1's peak"
    assert a.evidence == (
        Evidence("imports grew the process by", "150 MiB"),
        Evidence("process peak", "200 MiB"),
        Evidence("import time", "300 ms of 10.00 s wall"),
        Evidence("largest", "torch 120 MiB, numpy 20.0 MiB, yaml 8.0 MiB"),
    )


def test_slow_imports_are_named_by_their_time() -> None:
    p = make_profile(
        peaks={1: 500 * MIB},
        imports=[imported("torch", 5 * MIB, 3.0), imported("pandas", 4 * MIB, 0.5), imported("x", 0, 0.1)],
        wall=10.0,
    )
    a = only(advise(p, CWD), "imports")
    assert a.title == "Imports take 36% of the wall time"
    assert evidence(a) == {
        "imports grew the process by": "9.0 MiB",
        "process peak": "500 MiB",
        "import time": "3.60 s of 10.00 s wall",
        "largest": "torch 3.00 s, pandas 500 ms, x 100 ms",
    }


def test_imports_below_the_thresholds_are_not_advised() -> None:
    # 31 MiB of a 40 MiB peak: most of it, but under 32 MiB
    assert advise(make_profile(peaks={1: 40 * MIB}, imports=[imported("numpy", 31 * MIB)]), CWD) == []
    assert only(
        advise(make_profile(peaks={1: 40 * MIB}, imports=[imported("numpy", 32 * MIB)]), CWD), "imports"
    )
    # 49% of the peak
    assert advise(make_profile(peaks={1: 100 * MIB}, imports=[imported("scipy", 49 * MIB)]), CWD) == []
    # 24% of the wall time; 45% of it, but under half a second
    assert advise(make_profile(imports=[imported("scipy", MIB, 0.6)], wall=2.5), CWD) == []
    assert advise(make_profile(imports=[imported("scipy", MIB, 0.45)], wall=1.0), CWD) == []
    assert only(advise(make_profile(imports=[imported("scipy", MIB, 0.5)], wall=1.0), CWD), "imports")


def test_imports_are_judged_per_process() -> None:
    # 60 MiB in each of two processes of 200 MiB: neither reaches half its own peak
    p = make_profile(
        peaks={1: 200 * MIB, 2: 200 * MIB},
        imports=[imported("torch", 60 * MIB, pid=1), imported("torch", 60 * MIB, pid=2)],
    )
    assert advise(p, CWD) == []
    p.imports.append(imported("transformers", 50 * MIB, pid=2))
    a = only(advise(p, CWD), "imports")
    assert a.title == "Imports make 55% of process 2's peak"
    assert evidence(a)["imports grew the process by"] == "110 MiB"


# --- temporaries --------------------------------------------------------------------------------


def test_line_that_released_what_it_held_at_the_peak() -> None:
    p = make_profile(
        peaks={1: 400 * MIB},
        attribution=[held(WORK, 20, 300 * MIB, "y = (x * 2 + 1).sum()")],
        lines=[ran(WORK, 20, growth=10 * MIB, cpu=1.0)],
    )
    a = only(advise(p, CWD), "temporaries")
    assert a.where == "work.py:20"
    assert a.title == "290 MiB of temporaries at the peak line, released soon after"
    assert "the peak would drop by up to 290 MiB" in a.detail
    assert a.evidence == (
        Evidence("held at the peak", "300 MiB"),
        Evidence("kept after the line ran", "10.0 MiB"),
        Evidence("process peak", "400 MiB"),
    )


def test_a_line_still_held_at_exit_is_not_called_temporaries() -> None:
    # a script that failed with its arrays alive: its lines' bytes never went away, and the
    # report lists them under "still held at exit"; advice calling them "released soon after"
    # contradicted that table
    p = make_profile(
        peaks={1: 400 * MIB},
        attribution=[held(WORK, 20, 300 * MIB, "b = a * 2")],
        lines=[ran(WORK, 20, growth=10 * MIB, cpu=1.0)],
        held_at_exit=[HeldLine(1, WORK, 20, "<module>", 300 * MIB, "b = a * 2")],
    )
    assert [a.kind for a in advise(p, CWD)] == []


def test_temporaries_of_several_lines_are_one_advice_largest_first() -> None:
    # the same words ("Work in chunks, ...") once, not once a line
    p = make_profile(
        peaks={1: 900 * MIB},
        attribution=[
            held(WORK, 20, 300 * MIB, "y = f(x)"),
            held(WORK, 30, 500 * MIB, "z = g(x)"),
        ],
        lines=[ran(WORK, 20, growth=0), ran(WORK, 30, growth=0)],
    )
    (a,) = advise(p, CWD)
    assert (a.kind, a.where) == ("temporaries", "work.py:30")
    assert a.title == "500 MiB of temporaries at the peak line, released soon after"
    assert evidence(a)["other lines of temporaries at the peak"] == "work.py:20 300 MiB"


def test_a_line_that_released_more_than_it_grew_kept_nothing() -> None:
    p = make_profile(
        peaks={1: 400 * MIB},
        attribution=[held(WORK, 20, 300 * MIB, "y = f(x)")],
        lines=[ran(WORK, 20, growth=-50 * MIB)],
    )
    a = only(advise(p, CWD), "temporaries")
    assert a.title == "300 MiB of temporaries at the peak line, released soon after"
    assert evidence(a)["kept after the line ran"] == "0 B"


def _with_series(p: Profile, values_mib: list[int], pid: int = 1) -> Profile:
    p.timeline = Timeline(
        0.1,
        [0.1 * i for i in range(len(values_mib))],
        [v * MIB for v in values_mib],
        processes=[ProcessSeries(pid, 0, [v * MIB for v in values_mib])],
    )
    return p


def test_memory_released_after_the_peak_and_not_taken_again_is_a_temporary() -> None:
    # the line kept all it grew while it ran (the release came on the next line, `del x`), but
    # the process fell by 300 MiB after its peak and stayed there
    p = make_profile(
        peaks={1: 400 * MIB},
        attribution=[held(WORK, 20, 300 * MIB, "x = np.ones(n)")],
        lines=[ran(WORK, 20, growth=300 * MIB, cpu=1.0)],
    )
    a = only(advise(_with_series(p, [50, 100, 400, 100, 100, 110, 100, 20]), CWD), "temporaries")
    assert a.where == "work.py:20"
    assert a.title == "300 MiB of temporaries at the peak line, released soon after"
    assert a.evidence == (
        Evidence("held at the peak", "300 MiB"),
        Evidence("process resident at its highest sample", "400 MiB"),
        Evidence("after it (median of the later samples)", "100 MiB"),
        Evidence("process peak", "400 MiB"),
    )


def test_memory_held_until_the_end_is_not_a_temporary() -> None:
    p = make_profile(
        peaks={1: 400 * MIB},
        attribution=[held(WORK, 20, 300 * MIB, "x = np.ones(n)")],
        lines=[ran(WORK, 20, growth=300 * MIB, cpu=1.0)],
    )
    # released only in the last sample (the interpreter's teardown), or briefly: no advice
    assert advise(_with_series(p, [50, 100, 400, 400, 390, 400, 20]), CWD) == []
    p2 = make_profile(
        peaks={1: 400 * MIB},
        attribution=[held(WORK, 20, 300 * MIB, "x = np.ones(n)")],
        lines=[ran(WORK, 20, growth=300 * MIB, cpu=1.0)],
    )
    assert advise(_with_series(p2, [50, 400, 100, 400, 400, 400, 400]), CWD) == []
    # too few samples after the peak to tell
    p3 = make_profile(
        peaks={1: 400 * MIB},
        attribution=[held(WORK, 20, 300 * MIB, "x = np.ones(n)")],
        lines=[ran(WORK, 20, growth=300 * MIB, cpu=1.0)],
    )
    assert advise(_with_series(p3, [50, 400, 100, 100, 20]), CWD) == []


def test_temporaries_below_the_thresholds_are_not_advised() -> None:
    def advised(size: int, kept: int, peak: int = 400 * MIB) -> list[Advice]:
        p = make_profile(
            peaks={1: peak},
            attribution=[held(WORK, 20, size, "y = f(x)")],
            lines=[ran(WORK, 20, growth=kept)],
        )
        return advise(p, CWD)

    assert advised(300 * MIB, 180 * MIB) == []  # kept 60% of what it held
    assert advised(300 * MIB, 150 * MIB) == []  # kept half
    assert [a.kind for a in advised(300 * MIB, 150 * MIB - 1)] == ["temporaries"]
    assert advised(79 * MIB, 0) == []  # 19.75% of the peak
    assert [a.kind for a in advised(80 * MIB, 0)] == ["temporaries"]
    assert advised(32 * MIB - 1, 0, peak=64 * MIB) == []  # half the peak, but under 32 MiB
    assert [a.kind for a in advised(32 * MIB, 0, peak=64 * MIB)] == ["temporaries"]


def test_temporaries_need_the_lines_own_figures() -> None:
    # no line statistics for the line (its growth is unknown), or no line at all (start-up)
    p = make_profile(attribution=[held(WORK, 20, 600 * MIB, "y = f(x)")], lines=[ran(WORK, 21)])
    assert advise(p, CWD) == []
    p = make_profile(attribution=[held("<startup>", 0, 600 * MIB, "")], lines=[ran("<startup>", 0)])
    assert advise(p, CWD) == []
    # the same line in another process is another line
    p = make_profile(
        peaks={1: 1000 * MIB, 2: 1000 * MIB},
        attribution=[held(WORK, 20, 600 * MIB, "y = f(x)", pid=2)],
        lines=[ran(WORK, 20, growth=0, pid=1), ran(WORK, 20, growth=600 * MIB, pid=2)],
    )
    assert advise(p, CWD) == []


def test_a_lines_growth_and_holding_are_summed_over_its_functions() -> None:
    # `total = sum(float((x * k).sum()) for k in ks)`: the temporaries are built in the generator
    # expression, on the same line as the sum
    p = make_profile(
        peaks={1: 500 * MIB},
        attribution=[
            held(WORK, 30, 250 * MIB, "total = sum(...)", function="<genexpr>"),
            held(WORK, 30, 50 * MIB, "total = sum(...)", function="run"),
        ],
        lines=[
            ran(WORK, 30, growth=240 * MIB, function="<genexpr>"),
            ran(WORK, 30, growth=-200 * MIB, function="run"),
        ],
    )
    a = only(advise(p, CWD), "temporaries")
    assert evidence(a) == {
        "held at the peak": "300 MiB",
        "kept after the line ran": "40.0 MiB",
        "process peak": "500 MiB",
    }


# --- waiting ------------------------------------------------------------------------------------


def test_a_line_waiting_while_the_cpu_idles() -> None:
    p = make_profile(
        lines=[ran(SERVE, 7, wait=4.0, cpu=0.1), ran(SERVE, 9, wait=1.0, cpu=2.0)], wall=10.0, cpu=(2.0, 1.0)
    )
    a = only(advise(p, CWD), "waiting")
    assert a.where == "serve.py:7"
    assert a.title == "CPU idle: the program waited 40% of its wall time on one line"
    assert a.evidence == (
        Evidence("waiting on this line", "4.00 s"),
        Evidence("wall time", "10.00 s"),
        Evidence("CPU used", "3.00 s (30% of one core)"),
    )


def test_waiting_below_the_thresholds_is_not_advised() -> None:
    def advised(wait: float, cpu: float) -> list[Advice]:
        return advise(make_profile(lines=[ran(SERVE, 7, wait=wait)], wall=10.0, cpu=(cpu, 0.0)), CWD)

    assert advised(2.4, 1.0) == []  # 24% of the wall time
    assert [a.kind for a in advised(2.5, 1.0)] == ["waiting"]
    assert advised(8.0, 5.0) == []  # half a core used
    assert [a.kind for a in advised(8.0, 4.9)] == ["waiting"]
    assert advise(make_profile(lines=[ran(SERVE, 7, wait=8.0)], wall=0.0, cpu=(0.0, 0.0)), CWD) == []


def test_library_and_pseudo_lines_waiting_are_not_the_programs() -> None:
    # a pool's idle threads wait in library code: the user line with the most waiting is judged
    lib = "/usr/lib/python3.11/site-packages/concurrent/futures/thread.py"
    p = make_profile(
        lines=[ran(lib, 81, wait=9.0), ran("<native>", 0, wait=9.0), ran(SERVE, 7, wait=1.0)],
        wall=10.0,
        cpu=(1.0, 0.0),
    )
    assert advise(p, CWD) == []
    p.lines.append(ran(SERVE, 12, wait=3.0))
    assert only(advise(p, CWD), "waiting").where == "serve.py:12"


# --- together -----------------------------------------------------------------------------------


def test_most_memory_at_stake_first_and_waiting_last() -> None:
    p = make_profile(
        peaks={1: 1000 * MIB, 2: 200 * MIB},
        attribution=[
            held(LOAD, 12, 300 * MIB, "df = pd.read_csv(path)"),  # kept: not temporaries
            held(WORK, 20, 600 * MIB, "y = (x * 2).sum()"),  # 500 MiB released
        ],
        lines=[
            ran(SERVE, 7, wait=5.0),
            ran(LOAD, 12, growth=300 * MIB),
            ran(WORK, 20, growth=100 * MIB),
        ],
        imports=[imported("torch", 150 * MIB, pid=2)],  # 75% of process 2's peak
        wall=10.0,
        cpu=(2.0, 0.5),
    )
    found = advise(p, CWD)
    assert [(a.kind, a.where) for a in found] == [
        ("temporaries", "work.py:20"),
        ("file-io", "load.py:12"),
        ("imports", None),
        ("waiting", "serve.py:7"),
    ]
    assert evidence(found[0])["held at the peak"] == "600 MiB"
    assert evidence(found[0])["kept after the line ran"] == "100 MiB"
    assert evidence(found[2])["process peak"] == "200 MiB"
    assert evidence(found[3])["CPU used"] == "2.50 s (25% of one core)"


def test_paths_are_shown_relative_to_cwd() -> None:
    p = make_profile(attribution=[held(LOAD, 12, 300 * MIB, "df = pd.read_csv(path)")])
    assert only(advise(p, "/elsewhere"), "file-io").where == f"{LOAD}:12"
    assert only(advise(p, f"{CWD}/"), "file-io").where == "load.py:12"


def test_a_profile_without_lines_imports_or_attribution_has_no_advice() -> None:
    assert advise(make_profile(), CWD) == []
    assert advise(make_profile(peaks={}, wall=0.0, cpu=(0.0, 0.0)), CWD) == []


def test_advice_survives_the_profiles_json_round_trip() -> None:
    p = make_profile(
        attribution=[held(LOAD, 12, 300 * MIB, "df = pd.read_csv(path)")],
        lines=[ran(SERVE, 7, wait=5.0)],
        cpu=(1.0, 0.0),
    )
    assert advise(Profile.from_json(p.to_json()), CWD) == advise(p, CWD)


# --- real runs ----------------------------------------------------------------------------------

_SIZE = re.compile(r"([\d.]+) (B|KiB|MiB|GiB)")
_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
_TIME = re.compile(r"([\d.]+) (µs|ms|s)")
_SECONDS = {"µs": 1e-6, "ms": 1e-3, "s": 1.0}


def parse_bytes(text: str) -> float:
    m = _SIZE.fullmatch(text)
    assert m, text
    return float(m.group(1)) * _UNITS[m.group(2)]


def parse_seconds(text: str) -> float:
    m = _TIME.fullmatch(text)
    assert m, text
    return float(m.group(1)) * _SECONDS[m.group(2)]


def advise_run(
    program: str, tmp_path: Path, *, timeout: float = 120, env: dict[str, str] | None = None
) -> tuple[Profile, list[Advice]]:
    r = run_memgauge([str(PROGRAMS / program)], tmp_path, timeout=timeout, env=env)
    assert r.returncode == 0, r.stderr
    assert r.profile is not None
    profile = Profile.from_dict(r.profile)
    return profile, advise(profile, cwd=str(PROGRAMS))


@pytest.mark.parametrize("program", ["advice_temporaries.py", "advice_temporaries_next.py"])
def test_real_temporaries(program: str, tmp_path: Path) -> None:
    """Freed inside the line (seen while the line runs), and freed with the sampler's next look
    on the next line (the common shape: the line's own growth is +300 MiB, the process's fall
    after the peak tells)."""
    pytest.importorskip("numpy")
    profile, found = advise_run(program, tmp_path)
    temporaries = [a for a in found if a.kind == "temporaries"]
    assert len(temporaries) == 1, (found, profile.peak.attribution)
    a = temporaries[0]
    assert a.where == f"{program}:{marker(PROGRAMS / program, 'temporaries')}"
    figures = evidence(a)
    # 300 MiB built; the sampler charges a few MiB either side (a line's last interval of page
    # faults can go to the next line, docs/measurement.md)
    assert 280 * MIB <= parse_bytes(figures["held at the peak"]) <= 330 * MIB, figures
    released = parse_bytes(a.title.split(" of temporaries")[0])
    assert 250 * MIB <= released <= 330 * MIB, a.title
    assert found[0] is a  # nothing else has as much memory at stake


def test_real_json_file_read_whole(tmp_path: Path) -> None:
    program = "advice_json_io.py"
    profile, found = advise_run(program, tmp_path)
    file_io = [a for a in found if a.kind == "file-io"]
    assert len(file_io) == 1, (found, profile.peak.attribution)
    a = file_io[0]
    assert a.where == f"{program}:{marker(PROGRAMS / program, 'load')}"
    assert a.title.startswith("A file parsed by json.load() makes ")
    figures = evidence(a)
    # 500,000 records parsed: ~200 MiB of Python objects, and the 40 MB of text while it is parsed
    assert 160 * MIB <= parse_bytes(figures["held at the peak"]) <= 290 * MIB, figures
    assert int(figures["share"].rstrip("%")) >= 60, figures


def test_real_sleep_on_one_line(tmp_path: Path) -> None:
    program = "advice_waiting.py"
    profile, found = advise_run(program, tmp_path)
    a = only(found, "waiting")
    assert a.where == f"{program}:{marker(PROGRAMS / program, 'wait')}"
    figures = evidence(a)
    assert 1.3 <= parse_seconds(figures["waiting on this line"]) <= 1.8, figures
    line = next(s for s in profile.lines if a.where == f"{program}:{s.line}")
    assert figures["waiting on this line"] == format_seconds(line.wait_seconds)
    assert figures["wall time"] == format_seconds(profile.wall_seconds)


@pytest.mark.skipif(
    importlib.util.find_spec("torch") is None,
    reason="torch is not installed: the imports advice is checked on torch's import (CI installs it)",
)
def test_real_torch_import(tmp_path: Path) -> None:
    profile, found = advise_run("advice_imports.py", tmp_path, timeout=300)
    a = only(found, "imports")
    pid = profile.processes[0].pid
    assert a.title.startswith("Imports make ") and a.title.endswith(f"of process {pid}'s peak"), a.title
    figures = evidence(a)
    assert figures["largest"].startswith("torch "), figures
    assert parse_bytes(figures["imports grew the process by"]) >= 64 * MIB, figures


def test_real_cpu_loop_with_small_memory_has_no_advice(tmp_path: Path) -> None:
    truth_file = tmp_path / "truth.json"
    profile, found = advise_run("advice_none.py", tmp_path, env={"TRUTH_OUT": str(truth_file)})
    truth = json.loads(truth_file.read_text())
    # the run was seen: the loop's line was sampled, busy
    loop = marker(PROGRAMS / "advice_none.py", "loop")
    assert any(s.line in (loop, loop + 1) and s.cpu_python_seconds > 0.3 for s in profile.lines), (
        profile.lines
    )
    if truth["cpu"] >= 0.75 * truth["wall"]:
        assert found == [], truth
    else:
        # other processes kept the loop off its core a quarter of the time or more: time off the
        # CPU is waiting to a sampler (wall - CPU), so only the waiting advice may be given
        assert {a.kind for a in found} <= {"waiting"}, (found, truth)


def test_real_import_line_is_never_temporaries(tmp_path: Path) -> None:
    """A library that builds 300 MiB while it is imported and frees it: the import line holds the
    peak and keeps nothing after, yet it is import footprint (issue 16), never temporaries."""
    program = "advice_import_temporaries.py"
    profile, found = advise_run(program, tmp_path)
    line = marker(PROGRAMS / program, "import")
    held_there = sum(a.bytes for a in profile.peak.attribution if a.line == line and a.file.endswith(program))
    # the run did put the peak on the import line: the shape the temporaries rule fires on
    assert held_there >= 250 * MIB, profile.peak.attribution
    assert [a for a in found if a.kind == "temporaries"] == [], found


def test_real_advice_in_the_terminal_and_markdown_reports(tmp_path: Path) -> None:
    """The advice the HTML report gives is in the terminal report `memgauge run` prints and in
    `memgauge view --format md` (issue 16), with the same title and place; a run without advice
    has no advice section in either."""
    import subprocess
    import sys

    pytest.importorskip("numpy")
    program = "advice_temporaries.py"
    r = run_memgauge([str(PROGRAMS / program)], tmp_path)
    assert r.returncode == 0 and r.profile is not None, r.stderr
    found = advise(Profile.from_dict(r.profile), cwd=str(PROGRAMS))
    a = next(a for a in found if a.kind == "temporaries")
    terminal = " ".join(r.stderr.split())  # wrapped to the width: compared as words
    assert "advice" in r.stderr.splitlines(), r.stderr
    assert a.title in terminal and f":{marker(PROGRAMS / program, 'temporaries')}" in terminal, r.stderr
    md = subprocess.run(
        [sys.executable, "-m", "memgauge", "view", "--format", "md", str(tmp_path / "profile.json")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "**advice**" in md and a.title in md, md

    quiet = run_memgauge([str(PROGRAMS / "advice_none.py")], tmp_path, env={"TRUTH_OUT": str(tmp_path / "t")})
    assert quiet.returncode == 0 and quiet.profile is not None
    if not advise(Profile.from_dict(quiet.profile)):
        assert "advice" not in quiet.stderr.splitlines(), quiet.stderr
