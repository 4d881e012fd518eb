"""Sweep parameters, the grid, the record's round trip, and the local engine's cancel."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from memgauge._errors import ProfileFormatError, UsageError
from memgauge.model import Point, RunSummary, SweepResult, load_sweep
from memgauge.model._sweep import PhaseSummary
from memgauge.sweep import Job, LocalEngine
from memgauge.sweep._params import (
    environment,
    expand,
    grid,
    parse_param,
    parse_predict,
    parse_value,
    substitute,
)
from tests.conftest import PROGRAMS


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("10", 10),
        ("1e4", 10000),
        ("2.5e3", 2500),
        ("0.5", 0.5),
        ("1.5e-3", 0.0015),
        ("mlp", "mlp"),
        ("nan", "nan"),
    ],
)
def test_values_are_integers_where_whole(text: str, value: object) -> None:
    parsed = parse_value(text)
    assert parsed == value and type(parsed) is type(value)


def test_grid_and_what_reaches_the_program() -> None:
    params = dict([parse_param("N=1e3,2e3"), parse_param("MODEL=linear,mlp")])
    points = grid(params)
    assert points == [
        {"N": 1000, "MODEL": "linear"},
        {"N": 1000, "MODEL": "mlp"},
        {"N": 2000, "MODEL": "linear"},
        {"N": 2000, "MODEL": "mlp"},
    ]
    assert environment({"N": 1000, "S": 0.25}) == {"N": "1000", "S": "0.25"}
    assert expand(["--rows {N} --model '{MODEL} x'"], points[1]) == ["--rows", "1000", "--model", "mlp x"]
    # program arguments are substituted but never split; unknown names stay as written
    assert substitute(["a {N} b", "{OTHER}"], points[0]) == ["a 1000 b", "{OTHER}"]


def test_predict_names_one_size_and_may_fix_measured_values() -> None:
    params = {"N": [100, 200, 400], "F": [10, 100]}
    assert parse_predict(["N=1e4", "F=100"], params) == ("N", 10000.0, {"F": 100})
    with pytest.raises(UsageError, match="one parameter at a time"):
        parse_predict(["N=1e4", "F=1000"], params)
    with pytest.raises(UsageError, match="every value given was measured"):
        parse_predict(["N=200"], params)


def test_record_round_trips_and_rejects_other_files(tmp_path: Path) -> None:
    run = RunSummary(
        ok=True,
        exit="exit 0",
        rss_bytes=5 << 20,
        wall_seconds=1.5,
        cpu_seconds=1.25,
        phases={"fit": PhaseSummary(1.0, 4 << 20, 0)},
        metrics={"items": 100.0},
    )
    result = SweepResult(
        ["p.py"], {"N": [1, 2]}, 1, "local", 1, points=[Point({"N": 1}, [run]), Point({"N": 2})]
    )
    path = tmp_path / "r.json"
    result.save(str(path))
    again = load_sweep(path)
    assert again == result
    assert again.points[0].runs[0].value("phase:fit.peak") == 4 << 20
    assert again.points[0].runs[0].value("throughput:items") == pytest.approx(100 / 1.5)
    assert again.points[0].median("rss") == 5 << 20 and again.points[1].median("rss") is None
    (tmp_path / "profile.json").write_text('{"schema_version": 4}')
    with pytest.raises(ProfileFormatError, match="not a memgauge sweep record"):
        load_sweep(tmp_path / "profile.json")


def test_local_engine_cancel_stops_a_running_job_and_its_program(tmp_path: Path) -> None:
    started = tmp_path / "started"
    job = Job(
        "sleep",
        (str(PROGRAMS / "sweep_sleep.py"),),
        env={"SLEEP": "60", "STARTED_FILE": str(started), "N": "1"},
        cwd=str(tmp_path),
        run_options=("--no-lines",),
    )
    queued = Job("queued", (str(PROGRAMS / "sweep_sleep.py"),), env={"SLEEP": "0"}, cwd=str(tmp_path))
    with LocalEngine(1) as engine:
        handle = engine.submit(job)
        waiting = engine.submit(queued)
        deadline = time.monotonic() + 30
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        # else the cancel below would stop a job that never ran, and prove nothing
        assert started.exists(), "the program never started"
        assert _running("sweep_sleep.py", str(started))
        waiting.cancel()
        t = time.monotonic()
        handle.cancel()
        result = handle.future.result(timeout=30)
        assert time.monotonic() - t < 10
        assert result.cancelled and result.error == "cancelled"
        assert waiting.future.result(timeout=30).cancelled
    # the program is gone with its memgauge
    assert not _running("sweep_sleep.py", str(started))


def _running(*needles: str) -> bool:
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                env = Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if needles[0] in cmd and needles[1] in env:
                return True
    return False


def test_failed_runs_are_left_out_of_the_laws() -> None:
    from memgauge.analysis._sweep_laws import growth_laws

    def run(n: int, ok: bool = True) -> RunSummary:
        return RunSummary(
            ok=ok, exit="exit 0" if ok else "killed by the OOM killer", rss_bytes=(10 + n) << 20
        )

    points = [Point({"N": n}, [run(n)]) for n in (10, 20, 40, 80)]
    # killed early: a tenth of what it would have held
    points[3].runs.append(RunSummary(ok=False, exit="killed by SIGKILL", rss_bytes=9 << 20))
    result = SweepResult(["p.py"], {"N": [10, 20, 40, 80]}, 2, "local", 1, points=points)
    (row,) = [r for r in growth_laws(result) if r.metric == "rss"]
    assert row.observations == 4 and row.growth is not None
    assert row.growth.best.law == "linear" and row.growth.best.r2 > 0.9999
