"""The curated public API, and measuring in-process with `memgauge.profile()`."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import memgauge

MIB = 1 << 20


def test_public_api_is_exactly_all() -> None:
    assert sorted(memgauge.__all__) == [
        "MemgaugeError",
        "Profile",
        "__version__",
        "load_profile",
        "phase",
        "profile",
        "record",
        "step",
        "timed_iter",
    ]
    for name in memgauge.__all__:
        assert getattr(memgauge, name) is not None
    assert sorted(dir(memgauge)) == sorted(memgauge.__all__)


def test_importing_memgauge_loads_no_heavy_modules() -> None:
    # measured processes import memgauge for `phase`: it must not drag rich, typing, dataclasses or the
    # runner in (all of it would be measured as the program's own)
    code = (
        "import sys, memgauge\n"
        "with memgauge.phase('x'):\n"
        "    pass\n"
        "roots = {'rich', 'typing', 'dataclasses', 'memgauge'}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in roots))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = eval(out)
    # what the bare interpreter loads by itself (a .pth file of an installed package may import
    # typing at start-up) is not memgauge's doing
    bare = (
        "import sys\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'rich', 'typing', 'dataclasses'}))"
    )
    already = set(
        eval(subprocess.run([sys.executable, "-c", bare], capture_output=True, text=True, check=True).stdout)
    )
    assert "memgauge.capture._phases" in loaded  # phase was really loaded
    assert not [m for m in loaded if m.startswith(("rich", "typing", "dataclasses")) and m not in already]
    assert "memgauge.runner" not in loaded and "memgauge.cli" not in loaded


def test_inprocess_profile_measures_the_block_only(tmp_path: Path) -> None:
    before = b"\x01" * (300 * MIB)  # a peak before the block must not count
    del before
    with memgauge.profile() as prof:
        with memgauge.phase("build"):
            block = b"\x02" * (200 * MIB)
            time.sleep(0.05)
        del block
        with memgauge.phase("small"):
            small = b"\x03" * (10 * MIB)
        del small
    p = prof.profile
    assert p is not None
    assert p.peak.method == "vmhwm-reset" and p.peak.error_bound_bytes == 0
    base = p.phases[0].start_resident_bytes
    assert 200 * MIB <= p.peak.resident_bytes - base <= 230 * MIB
    # what a container needs, in-process: the block's own peak (the gate's rss judges it)
    assert (p.peak.needs_bytes, p.peak.needs_method) == (p.peak.resident_bytes, "block peak (in-process)")
    assert p.peak.needs_at_seconds is None
    build, small_phase = p.phases
    assert (build.name, small_phase.name) == ("build", "small")
    assert 200 * MIB - 4 * MIB <= build.peak_resident_bytes - base <= 230 * MIB
    # small runs after build's block is freed: its own peak, not build's
    assert small_phase.peak_resident_bytes - base <= 40 * MIB
    assert build.duration_seconds >= 0.05
    assert p.wall_seconds >= build.duration_seconds
    assert len(p.timeline.t_seconds) >= 2
    out = tmp_path / "run.json"
    prof.save(out)
    assert memgauge.load_profile(out) == p


def test_phase_is_a_noop_without_a_profile() -> None:
    calls = []

    @memgauge.phase("x")
    def f() -> int:
        calls.append(1)
        return 5

    with memgauge.phase("y") as ph:
        assert ph.name == "y"
    assert f() == 5 and calls == [1]
