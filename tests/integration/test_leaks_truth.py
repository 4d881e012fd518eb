"""Leak detection on ground-truth programs (tests/programs/leak_*.py), real runs: what must never
be flagged, what must, and what is held at exit (issue 16, part 3)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROGRAMS, run_memgauge


def test_an_import_that_grows_steadily_is_never_a_leak(tmp_path: Path) -> None:
    """A library that grows 2 MiB every 20 ms for a second while it is imported, and keeps it:
    the import line fits a leak's shape (~90 MiB/s measured when the rule is off), yet an import is
    a one-off cost."""
    program = PROGRAMS / "leak_import.py"
    for run in range(3):
        r = run_memgauge([str(program)], tmp_path)
        assert r.returncode == 0 and r.profile is not None, r.stderr
        # the library's growth was seen, on the import line: the case the rule is about
        held = [a for a in r.profile["peak"]["attribution"] if a["file"] == str(program)]
        assert sum(a["bytes"] for a in held) >= 80 << 20, (run, held)
        assert r.profile["leaks"] == [], (run, r.profile["leaks"])


def _marked(path: Path, tag: str) -> int:
    return next(n for n, text in enumerate(path.read_text().splitlines(), 1) if f"# LINE: {tag}" in text)


def _suspects(profile: dict[str, Any], program: Path) -> list[int]:
    return [s["line"] for s in profile["leaks"] if s["file"] == str(program)]


def test_a_request_loop_that_keeps_1_mib_per_request_is_flagged(tmp_path: Path) -> None:
    program = PROGRAMS / "leak_loop.py"
    r = run_memgauge([str(program)], tmp_path)
    assert r.returncode == 0 and r.profile is not None, r.stderr
    assert _suspects(r.profile, program), r.profile["leaks"]
    held = {h["line"]: h["bytes"] for h in r.profile["held_at_exit"] if h["file"] == str(program)}
    assert sum(held.values()) >= 100 << 20, held  # ~190 requests of 1 MiB in 2 s, all kept


def test_the_leak_is_named_on_the_line_that_allocates(tmp_path: Path) -> None:
    program = PROGRAMS / "leak_loop.py"
    r = run_memgauge([str(program)], tmp_path)
    assert r.profile is not None
    assert _marked(program, "leak") in _suspects(r.profile, program), r.profile["leaks"]


@pytest.mark.parametrize("name", ["leak_cache.py", "leak_child_array.py"])
def test_a_bounded_cache_and_a_one_off_array_in_a_child_are_not_leaks(tmp_path: Path, name: str) -> None:
    program = PROGRAMS / name
    for run in range(2):
        r = run_memgauge([str(program)], tmp_path)
        assert r.returncode == 0 and r.profile is not None, r.stderr
        assert _suspects(r.profile, program) == [], (run, r.profile["leaks"])


def test_a_short_script_reports_what_it_holds_at_exit(tmp_path: Path) -> None:
    """200 x 2 MiB kept in a module-level list by a script of a few tenths of a second: held at exit
    on its line (391 MiB measured), in the profile and the terminal report; a run under 0.5 s of
    line samples says growth was not judged."""
    program = PROGRAMS / "leak_short.py"
    r = run_memgauge([str(program)], tmp_path)
    assert r.returncode == 0 and r.profile is not None, r.stderr
    held = {h["line"]: h["bytes"] for h in r.profile["held_at_exit"] if h["file"] == str(program)}
    # most of the 400 MiB is held by the script's lines, most on the appending line: sampling can
    # credit the growth of the last appends before a sample to the line after them, or to
    # memgauge's own exit (seen: 332 MiB on the append line and 72 MiB on the print line; 346 MiB
    # on the script's lines, the rest on memgauge's code; the same limit as the leak's line, issue 16)
    assert sum(held.values()) >= 300 << 20, r.profile["held_at_exit"]
    assert max(held, key=lambda line: held[line]) == _marked(program, "keep"), r.profile["held_at_exit"]
    assert "still held at exit" in r.stderr
    note = r.profile.get("leak_note", "")
    if r.profile["wall_seconds"] < 0.45:
        assert note.startswith("too short to judge growth"), note
        assert "note: too short to judge growth" in r.stderr
    assert _suspects(r.profile, program) == [], r.profile["leaks"]


@pytest.fixture
def loaded() -> Iterator[None]:
    """One CPU-bound process per core beside the run, as bench/leak_bench.py loads the machine."""
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)
    ]
    try:
        yield
    finally:
        for b in burners:
            b.kill()
            b.wait()


def test_a_short_one_off_build_is_not_a_leak_on_a_loaded_machine(tmp_path: Path, loaded: None) -> None:
    """Slowed past 0.5 s of line samples, the script's build of a kept list grows steadily to the
    end, as a leak does (flagged in 3 of 3 loaded runs before, docs/benchmarks.md): the thread ran
    (or was queued to run) the appending line all along, so it is a one-off build."""
    program = PROGRAMS / "leak_short.py"
    r = run_memgauge([str(program)], tmp_path)
    assert r.returncode == 0 and r.profile is not None, r.stderr
    held = {h["line"]: h["bytes"] for h in r.profile["held_at_exit"] if h["file"] == str(program)}
    assert sum(held.values()) >= 300 << 20, r.profile["held_at_exit"]
    assert _suspects(r.profile, program) == [], r.profile["leaks"]


@pytest.mark.parametrize("load", [False, True], ids=["idle", "loaded"])
def test_a_short_request_loop_that_keeps_1_mib_per_request_is_a_leak(
    tmp_path: Path, request: pytest.FixtureRequest, load: bool
) -> None:
    """As short as the one-off build, but its growth recurs across a loop whose requests also work
    and wait: found, idle or loaded, so the rule is not "a short run is never a leak"."""
    if load:
        request.getfixturevalue("loaded")
    program = PROGRAMS / "leak_short_loop.py"
    r = run_memgauge([str(program)], tmp_path)
    assert r.returncode == 0 and r.profile is not None, r.stderr
    assert _suspects(r.profile, program), r.profile["leaks"]
