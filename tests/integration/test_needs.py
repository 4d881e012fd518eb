"""What a container needs (``peak.needs_bytes``, issue 16 part 1) on real child processes in real
memory cgroups: the same cold or warm, at least the program's own ``VmHWM`` and close to it, a
hard limit of that size survived, a fork child's copy-on-write pages counted once, and the gate's
``rss`` judging it (mapped file pages the group was not charged for included), in the program's
process and in a child."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memgauge.gate import judge, parse_budget
from memgauge.model import Profile, load_profile, load_sweep
from memgauge.runner import RunOptions, Target, default_roots, evict_page_cache, run_program
from memgauge.runner._fit import trial
from memgauge.sweep import figures_of
from memgauge.watcher import create_memory_group
from tests.conftest import MIB, PROGRAMS

FIT_NUMPY = Target("script", str(PROGRAMS / "fit_numpy.py"))  # numpy, then 200 MiB of ones held
FORK = Target("script", str(PROGRAMS / "needs_fork.py"))


@pytest.fixture(scope="module", autouse=True)
def _needs_a_group() -> None:
    group, reason = create_memory_group("auto")
    if group is None:
        pytest.skip(f"no memory cgroup: {reason}")
    group.close()


def measured(target: Target, *, cold: bool) -> Profile:
    if cold:
        evict_page_cache(default_roots(target))
    return run_program(target, RunOptions(cgroup="auto", lines="off"))


@pytest.fixture(scope="module")
def numpy_cold() -> Profile:
    return measured(FIT_NUMPY, cold=True)


def test_needs_is_the_same_cold_or_warm_and_the_programs_own_peak(numpy_cold: Profile) -> None:
    warm = measured(FIT_NUMPY, cold=False)
    cold_needs, warm_needs = numpy_cold.peak.needs_bytes, warm.peak.needs_bytes
    assert abs(cold_needs - warm_needs) <= 0.05 * warm_needs, (cold_needs, warm_needs)
    for run in (numpy_cold, warm):
        (main,) = run.processes
        assert main.peak_exact  # the program's own VmHWM, reported at its exit
        # its file pages those in use: at most the process's max RSS, which counts every one
        # (a run shorter than a window of the working set counts every mapped file page)
        assert run.peak.needs_method in ("sampled working set", "sampled tree need")
        in_use = run.peak.needs_bytes - run.peak.needs_headroom_bytes
        assert in_use <= main.peak_resident_bytes
        assert run.peak.needs_headroom_bytes == round(0.05 * in_use)
        # known by construction: 200 MiB held, plus the interpreter and numpy
        assert 200 * MIB <= run.peak.needs_bytes <= 264 * MIB
        parts = run.peak.needs_anon_bytes + run.peak.needs_file_bytes + run.peak.needs_shmem_bytes
        assert run.peak.needs_anon_bytes >= 200 * MIB and parts <= in_use
        assert run.peak.page_cache_bytes is not None
    # cold, the group was charged for the libraries it read: its peak moves, the need does not
    assert numpy_cold.peak.page_cache_bytes is not None and numpy_cold.peak.page_cache_bytes > MIB


def test_a_hard_limit_of_what_it_needs_is_survived_cold(numpy_cold: Profile) -> None:
    under = trial(FIT_NUMPY, numpy_cold.peak.needs_bytes, cold=True, roots=default_roots(FIT_NUMPY))
    assert under.survived and under.oom_kills == 0, under


def test_a_fork_childs_shared_pages_count_once_and_its_need_is_survived() -> None:
    run = measured(FORK, cold=False)
    assert run.exit.code == 0 and len(run.processes) == 2
    peak = run.peak
    # the parent's 120 MiB (shared copy-on-write) once, the child's own 30 MiB, two interpreters
    assert 150 * MIB <= peak.needs_bytes <= 1.15 * peak.resident_bytes, peak
    assert peak.needs_method in ("sampled working set", "sampled tree need")
    # the plain sum of the processes' RSS counts the shared 120 MiB twice
    assert peak.sampled_tree_bytes >= peak.needs_bytes + 100 * MIB, peak
    under = trial(FORK, peak.needs_bytes, cold=False, roots=[], expect=0)
    assert under.survived, under


@pytest.mark.parametrize("child", [False, True], ids=["in-the-program", "in-a-child"])
def test_the_rss_budget_judges_what_it_needs_mapped_files_included(tmp_path: Path, child: bool) -> None:
    # 96 MiB in page cache, read here: mapping it charges the run's group nothing, yet a container
    # where it was not cached would have to hold it
    data = tmp_path / "data.bin"
    data.write_bytes(b"\x07" * (96 * MIB))
    out, profile = tmp_path / "verdict.json", tmp_path / "profile.json"
    program = [str(PROGRAMS / "needs_mapped.py"), *(["child"] if child else []), str(data)]
    args = ["--budget", "rss=80MiB", "-q", "--json", str(profile), "--format", "json", "-o", str(out)]
    r = subprocess.run(
        [sys.executable, "-m", "memgauge", "check", *args, *program],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    verdict = json.loads(out.read_text())
    (rss,) = verdict["results"]
    assert r.returncode == 1 and rss["status"] == "fail", (r.stderr, verdict)
    peak = json.loads(profile.read_text())["peak"]
    assert rss["measured"] == peak["needs_bytes"] >= 96 * MIB


def test_check_fit_and_sweep_give_a_run_one_memory_figure(tmp_path: Path) -> None:
    # 96 MiB mapped from page cache: the group is charged little of it, a container needs all of
    # it. A sweep's memory, fit's rss figure and check's rss all judge the need, never the charge
    data = tmp_path / "data.bin"
    data.write_bytes(b"\x07" * (96 * MIB))
    record, saved = tmp_path / "sweep.json", tmp_path / "runs"
    program = [str(PROGRAMS / "needs_mapped.py"), "--param", "N=1", "--json", str(record)]
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "memgauge",
            "sweep",
            *program,
            "--save",
            str(saved),
            "-q",
            "--",
            str(data),
            "{N}",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    (run,) = load_sweep(record).points[0].runs
    (path,) = saved.glob("*.json")
    profile = load_profile(path)
    peak = profile.peak
    assert peak.needs_bytes >= 96 * MIB and peak.resident_bytes < peak.needs_bytes - 48 * MIB, peak
    (rss,) = judge(profile, parse_budget("rss=1GiB")).results
    assert (
        run.value("rss") == figures_of(profile)["rss"] == rss.measured == peak.needs_bytes == run.needs_bytes
    )
    assert run.rss_bytes == peak.resident_bytes  # kept beside it
