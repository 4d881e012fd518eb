"""The HTML report as a file: self-contained, escaped, its data faithful to the profile. What a
browser makes of it is in test_html_browser.py."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from memgauge.model._profile import Attribution, CpuTimes, ExitStatus, Peak, PhaseRecord, Profile, Timeline
from memgauge.render import HtmlRenderer
from memgauge.render._html_page import CHARTJS_SHA256, CHARTJS_VERSION, asset
from tests.conftest import MIB
from tests.synthetic import long_profile

ROOT = Path(__file__).resolve().parents[2]


def embedded_data(page: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="memgauge-data">(.*?)</script>', page, re.S)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_vendored_chartjs_is_the_recorded_release() -> None:
    text = asset("chart.umd.min.js")
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == CHARTJS_SHA256
    assert text.startswith(f"/*!\n * Chart.js v{CHARTJS_VERSION}\n")
    license_text = (ROOT / "src/memgauge/render/_assets/chart.js.LICENSE.md").read_text()
    assert "MIT" in license_text or "Permission is hereby granted" in license_text


def test_report_is_one_file_that_fetches_nothing() -> None:
    page = HtmlRenderer().render(long_profile(hours=0.05))
    assert page.startswith("<!DOCTYPE html>")
    # no external script, stylesheet, image or frame: everything is inline
    assert not re.search(r"<(script|img|iframe)[^>]+src=", page)
    assert "<link" not in page
    assert "default-src 'none'" in page  # and the browser is told to refuse any fetch
    assert page.count("<script") == 3  # data, Chart.js, the page script


def test_embedded_data_is_the_profile_timeline() -> None:
    profile = long_profile(hours=0.05, workers=12)
    data = embedded_data(HtmlRenderer().render(profile))
    memory = data["memory"]
    tl = profile.timeline
    assert len(memory["t"]) == len(tl.t_seconds)
    series = {s["label"]: s for s in memory["series"]}
    assert series["sum of processes (shared pages in each)"]["values"] == tl.tree_resident_bytes
    assert series["cgroup (page cache included)"]["values"] == tl.cgroup_bytes
    # the 8 processes with the highest peaks, each at its own place on the time axis
    per_process = [s for s in memory["series"] if s["label"][0].isdigit()]
    assert len(per_process) == 8
    by_pid = {s.pid: s for s in tl.processes}
    expected = sorted(by_pid, key=lambda pid: -max(by_pid[pid].resident_bytes))[:8]
    assert sorted(int(s["label"].split()[0]) for s in per_process) == sorted(expected)
    for s in per_process:
        src = by_pid[int(s["label"].split()[0])]
        assert (s["start"], s["values"]) == (src.start_index, src.resident_bytes)
    assert memory["peak"] == {
        "t": round(profile.peak.at_seconds or 0, 3),
        "bytes": profile.peak.resident_bytes,
    }


def test_cpu_rate_is_cores_busy_over_windows() -> None:
    t = [0.01 * i for i in range(101)]  # 1 s at 10 ms
    user = [0.015 * i for i in range(101)]  # 1.5 cores busy throughout
    profile = Profile(
        command=["x"],
        exit=ExitStatus(0),
        wall_seconds=1.0,
        cpu=CpuTimes(1.5, 0.0),
        peak=Peak(resident_bytes=MIB),
        timeline=Timeline(0.01, t, [MIB] * 101, None, user, [0.0] * 101),
    )
    cpu = embedded_data(HtmlRenderer().render(profile))["cpu"]
    assert cpu["cores"] and all(c == pytest.approx(1.5) for c in cpu["cores"])
    # 50 ms windows, not one rate per 10 ms tick
    assert all(b - a >= 0.05 - 1e-9 for a, b in zip(cpu["t"][:-2], cpu["t"][1:-1], strict=True))
    assert cpu["t"][-1] == pytest.approx(1.0)


def test_profile_strings_cannot_close_the_data_script() -> None:
    evil = "</script><script>alert(1)</script>&<>"
    profile = Profile(
        command=["python", evil],
        exit=ExitStatus(0),
        wall_seconds=1.0,
        cpu=CpuTimes(),
        peak=Peak(resident_bytes=MIB, attribution=[Attribution(1, evil, 1, evil, MIB, [], evil)]),
        phases=[PhaseRecord(evil, 1, 0.0, 1.0, MIB)],
        timeline=Timeline(0.5, [0.0, 0.5], [MIB, MIB]),
    )
    page = HtmlRenderer().render(profile)
    assert evil not in page  # neither raw in the tables nor in the JSON
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert embedded_data(page)["phases"]["labels"] == [evil]  # the data still holds the real name


def test_one_hour_report_stays_under_5_mb() -> None:
    profile = long_profile(hours=1.0)
    page = HtmlRenderer().render(profile)
    size = len(page.encode("utf-8"))
    assert size < 5 * 1024 * 1024
    # and well under it: the caps, not luck, keep it small
    assert size < 2 * 1024 * 1024, size
    data = embedded_data(page)
    assert len(data["memory"]["phases"]) <= 200
    assert len(data["memory"]["series"]) <= 10


def test_wheel_ships_the_report_assets(tmp_path: Path) -> None:
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if build.returncode != 0:
        pytest.fail(f"pip wheel failed: {build.stderr[-2000:]}")
    (wheel,) = tmp_path.glob("memgauge-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in ("chart.umd.min.js", "chart.js.LICENSE.md", "report.js", "report.css"):
        assert f"memgauge/render/_assets/{name}" in names
