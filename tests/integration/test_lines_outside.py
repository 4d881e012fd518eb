"""The outside line sampler (py-spy) against programs whose answers are known by construction:
each big allocation one C call that holds the GIL, on its own line, sleeps between, in the main
thread, a worker thread and a spawned child; memory_profiler's documented example; and the
in-process sampler as the fallback."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from memgauge.watcher import outside_refusal
from tests.conftest import MIB, PROGRAMS, marker, run_memgauge

pytestmark = pytest.mark.skipif(
    outside_refusal() is not None, reason=f"no outside sampler: {outside_refusal()}"
)


def run_ok(args: list[str], tmp_path: Path, **kw: Any) -> dict[str, Any]:
    # the outside sampler where ptrace allows it (the in-process one is the default)
    kw["env"] = {"MEMGAUGE_LINE_SAMPLER": "auto", **kw.get("env", {})}
    r = run_memgauge(args, tmp_path, **kw)
    assert r.returncode == 0, r.stderr
    assert r.profile is not None
    return r.profile


def growth_of(profile: dict[str, Any], script: Path, line: int) -> int:
    return sum(
        s["resident_growth_bytes"] for s in profile["lines"] if s["file"] == str(script) and s["line"] == line
    )


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    np = pytest.importorskip("numpy")
    directory = tmp_path_factory.mktemp("c_calls")
    try:
        import pandas as pd

        pd.DataFrame(np.random.default_rng(0).random((500_000, 6))).to_csv(
            directory / "data.csv", index=False
        )
    except ImportError:
        pass
    try:
        import joblib

        # as big as the other lines' (36 million doubles): a load of 80 MB took ~20 ms, two of
        # py-spy's samples, and a stall of its sampling thread missed it whole (2 runs of 14)
        joblib.dump(np.ones(36_000_000), directory / "array.joblib")
    except ImportError:
        pass
    return directory


# a known defect of the outside sampler on 3.13, open in the lines issue: py-spy 0.4.3 now and then
# reads one stale stack of the main thread for seconds (the import before the function, 2.3 s,
# while three C-call lines ran), and those lines read 0 bytes: 1 of 40 idle runs of the main and
# thread modes on 3.13.0 (1 of 3 in an earlier count, on a loaded machine); 3.11 and 3.12 give each
# line its bytes every run
_NUMPY_313 = pytest.mark.xfail(
    sys.version_info >= (3, 13),
    reason="3.13: py-spy read a stale stack for seconds in ~1 run of 40",
    strict=False,
)


@pytest.mark.parametrize(
    "mode", [pytest.param("main", marks=_NUMPY_313), pytest.param("thread", marks=_NUMPY_313), "spawn"]
)
def test_each_c_call_line_gets_at_least_90_percent_of_its_bytes(
    mode: str, data_dir: Path, tmp_path: Path
) -> None:
    script = PROGRAMS / "lines_c_calls.py"
    profile = run_ok([str(script), mode, str(data_dir)], tmp_path)
    assert profile["environment"]["measurement"]["line_sampler"].startswith("py-spy"), profile["environment"]
    truth = json.loads((data_dir / f"truth.{mode}.json").read_text())
    assert {"repeat", "concat", "numpy", "dumps", "loads", "bytes"} <= truth.keys()
    got = {tag: growth_of(profile, script, marker(script, tag)) for tag in truth}
    # On a quiet machine each line gets >= 90% of its bytes. On one several times oversubscribed
    # the program, py-spy and the poller each wait for a CPU for milliseconds at a time, and part
    # of a line's growth lands on the sleep beside it: seen down to 49% for one line at load
    # average ~15 on 2 cores (docs/measurement.md). The floors below hold there, and still fail
    # the in-process sampler, which gives these lines nothing (0%) and their growth to others
    plain = [tag for tag in truth if tag not in ("zeros", "csv")]
    assert sum(got[t] for t in plain) >= 0.8 * sum(truth[t] for t in plain), (got, truth)
    for tag, size in truth.items():
        if tag == "zeros":
            assert abs(got[tag]) < 8 * MIB, (tag, got)  # calloc'd zero pages: none resident
        elif tag == "csv":
            # the parser's buffers come on top of the frame's own bytes
            assert got[tag] >= 0.5 * size, (tag, got, truth)
        else:
            assert 0.5 * size <= got[tag] <= 1.25 * size, (tag, got, truth)
    if mode == "spawn":
        main_pid = profile["processes"][0]["pid"]
        assert {s["pid"] for s in profile["lines"] if s["file"] == str(script)} - {main_pid}


def test_memory_profilers_example_gives_each_allocating_line_its_229_mib(tmp_path: Path) -> None:
    script = tmp_path / "mp_example.py"
    script.write_text(
        "import time\n\n\ndef my_func():\n    a = [1] * 10\n    b = [2] * (3 * 10**7)\n"
        "    time.sleep(0.4)\n    s = a + b\n    time.sleep(0.4)\n    return s\n\n\nkept = my_func()\n"
    )
    profile = run_ok([str(script)], tmp_path)
    size = 8 * 3 * 10**7  # 229 MiB of pointers each
    for line in (6, 8):  # the floor: see the test above (the in-process sampler: 2x and 0)
        assert 0.5 * size <= growth_of(profile, script, line) <= 1.1 * size, (line, profile["lines"])
    peak = {(a["file"], a["line"]): a["bytes"] for a in profile["peak"]["attribution"]}
    assert peak.get((str(script), 6), 0) >= 0.5 * size and peak.get((str(script), 8), 0) >= 0.5 * size, peak
    cpu = {
        s["line"]: s["cpu_python_seconds"] + s["cpu_native_seconds"]
        for s in profile["lines"]
        if s["file"] == str(script)
    }
    assert cpu.get(6, 0) > 0.01 and cpu.get(8, 0) > 0.01, cpu  # the C calls' CPU is on their lines


def test_the_in_process_sampler_runs_when_asked_and_the_profile_says_so(tmp_path: Path) -> None:
    script = tmp_path / "tiny.py"
    script.write_text("import time\nblock = bytearray(64 << 20)\ntime.sleep(0.2)\n")
    profile = run_ok([str(script)], tmp_path, env={"MEMGAUGE_LINE_SAMPLER": "inside"})
    assert profile["environment"]["measurement"]["line_sampler"] == "in-process (asked for)"
    assert any(s["file"] == str(script) for s in profile["lines"])
