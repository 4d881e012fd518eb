"""``memgauge fit-limit`` on real runs in real memory cgroups, caches cold (issue 16): a program
that writes 150 MiB of anonymous memory cannot survive a limit below 150 MiB, survives one at its
unlimited cgroup peak, and ``--prove`` says survived or OOM-killed with the exit status to match."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from memgauge.watcher import create_memory_group
from tests.conftest import MIB, PROGRAMS

FIT_ANON = PROGRAMS / "fit_anon.py"


@pytest.fixture(autouse=True)
def _needs_a_group() -> None:
    group, reason = create_memory_group("auto")
    if group is None:
        pytest.skip(f"no memory cgroup: {reason}")
    group.close()


def fit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memgauge", "fit-limit", *args, str(FIT_ANON)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def size(text: str, label: str) -> float:
    match = re.search(rf"{re.escape(label)}[^\n]*?([\d.]+) (MiB|GiB)", text)
    assert match is not None, text
    return float(match.group(1)) * (1024 if match.group(2) == "GiB" else 1)


def test_the_search_brackets_the_kernels_answer(tmp_path: Path) -> None:
    r = fit(cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""  # the program's own output is discarded: it runs a dozen times
    surviving = size(r.stderr, "smallest surviving limit:")
    killed = size(r.stderr, "(killed at")
    peak = size(r.stderr, "cgroup peak")
    full = size(r.stderr, "smallest full-speed limit")
    assert 150 <= surviving <= peak + 4  # the search's precision is 2 MiB, cold peaks move a little
    assert killed < surviving <= killed + 2.1
    assert surviving <= full <= peak + 4
    assert "OOM-killed" in r.stderr


@pytest.mark.parametrize(
    ("limit", "code", "outcome"), [("120MiB", 1, "OOM-killed"), ("400MiB", 0, "survived")]
)
def test_prove(limit: str, code: int, outcome: str, tmp_path: Path) -> None:
    r = fit("--prove", limit, cwd=tmp_path)
    assert r.returncode == code, r.stderr
    assert f"(cold): {outcome};" in r.stderr
    assert "x); limit hit" in r.stderr  # the slowdown against the unlimited run
    if code == 0:
        assert size(r.stderr, "; cgroup peak") * MIB < 400 * MIB
