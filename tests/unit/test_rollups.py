"""Per-function and per-file rollups (``memgauge.analysis.rollup``): exact sums over a hand-built
profile. Times are binary fractions, so the sums are exact."""

from __future__ import annotations

import pytest

from memgauge.analysis import Rollup, rollup
from memgauge.model import Attribution, LineStats, Profile
from tests.factories import held, make_profile, ran

MIB = 1 << 20
A = "/proj/a.py"
B = "/proj/b.py"


def _profile(lines: list[LineStats], attribution: list[Attribution]) -> Profile:
    return make_profile(rss=1000 * MIB, lines=lines, attribution=attribution)


def pool_profile() -> Profile:
    """``load`` in a.py runs in two processes (a pool), on lines 10 and 11, and holds the peak on
    lines 10 and 12 (12 was never sampled: it has no line statistics); b.py has a ``load`` of its
    own and a ``helper``; a.py has a ``save``."""
    return _profile(
        lines=[
            ran(A, 10, pid=1, function="load", py=1.0, native=0.5, growth=100 * MIB),
            ran(A, 11, pid=1, function="load", py=0.5, wait=1.0, growth=-20 * MIB),
            ran(A, 10, pid=2, function="load", py=2.0, wait=0.5, growth=50 * MIB),
            ran(A, 30, pid=1, function="save", py=0.25, wait=0.125),
            ran(B, 5, pid=1, function="load", py=0.125, growth=5 * MIB),
            ran(B, 8, pid=2, function="helper", native=3.0),
        ],
        attribution=[
            held(A, 10, 300 * MIB, pid=1, function="load"),
            held(A, 10, 200 * MIB, pid=2, function="load"),
            held(A, 12, 40 * MIB, pid=1, function="load"),
            held(B, 5, 10 * MIB, pid=1, function="load"),
        ],
    )


def test_by_function_sums_a_functions_lines_over_processes() -> None:
    assert rollup(pool_profile()) == [
        Rollup(A, "load", 3.5, 0.5, 1.5, 130 * MIB, 540 * MIB, lines=3),  # lines 10, 11, 12
        Rollup(B, "helper", 0.0, 3.0, 0.0, 0, 0, lines=1),
        Rollup(A, "save", 0.25, 0.0, 0.125, 0, 0, lines=1),
        Rollup(B, "load", 0.125, 0.0, 0.0, 5 * MIB, 10 * MIB, lines=1),
    ]


def test_by_file_folds_functions() -> None:
    assert rollup(pool_profile(), by="file") == [
        Rollup(A, "", 3.75, 0.5, 1.625, 130 * MIB, 540 * MIB, lines=4),  # lines 10, 11, 12, 30
        Rollup(B, "", 0.125, 3.0, 0.0, 5 * MIB, 10 * MIB, lines=2),
    ]


def test_default_is_by_function() -> None:
    assert rollup(pool_profile()) == rollup(pool_profile(), by="function")


def test_times_add_up() -> None:
    top = rollup(pool_profile())[0]
    assert top.cpu_seconds == 4.0
    assert top.total_seconds == 5.5


def test_the_totals_are_the_profiles() -> None:
    p = pool_profile()
    for by in ("function", "file"):
        rows = rollup(p, by)
        assert sum(r.total_seconds for r in rows) == 9.0
        assert sum(r.total_seconds for r in rows) == sum(
            s.cpu_python_seconds + s.cpu_native_seconds + s.wait_seconds for s in p.lines
        )
        assert sum(r.resident_growth_bytes for r in rows) == sum(s.resident_growth_bytes for s in p.lines)
        assert sum(r.peak_bytes for r in rows) == sum(a.bytes for a in p.peak.attribution)


def test_equal_times_are_ordered_by_peak_then_by_name() -> None:
    p = _profile(
        lines=[
            ran(B, 1, pid=1, function="z", py=1.0),
            ran(A, 1, pid=1, function="y", py=1.0),
            ran(A, 2, pid=1, function="x", py=1.0),
        ],
        attribution=[held(A, 9, 5 * MIB, pid=1, function="w"), held(B, 1, 1 * MIB, pid=1, function="z")],
    )
    assert [(r.file, r.function) for r in rollup(p)] == [(B, "z"), (A, "x"), (A, "y"), (A, "w")]
    assert [r.file for r in rollup(p, by="file")] == [A, B]  # 2 s against 1 s


def test_a_function_only_seen_holding_the_peak_has_a_row() -> None:
    p = _profile(
        lines=[],
        attribution=[
            held(A, 7, 64 * MIB, pid=3, function="build"),
            held(A, 7, 64 * MIB, pid=4, function="build"),
        ],
    )
    assert rollup(p) == [Rollup(A, "build", 0.0, 0.0, 0.0, 0, 128 * MIB, lines=1)]


def test_an_empty_profile_has_no_rows() -> None:
    assert rollup(_profile([], [])) == []
    assert rollup(_profile([], []), by="file") == []


@pytest.mark.parametrize("by", ["line", "", "Function", "files"])
def test_rollup_by_anything_else_is_an_error(by: str) -> None:
    with pytest.raises(ValueError, match=r"rollup by 'function' or 'file', not"):
        rollup(pool_profile(), by=by)
