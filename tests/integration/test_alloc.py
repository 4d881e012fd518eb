"""Allocation tracking (``--alloc``) against programs whose allocations are known by construction.

Each program runs in a real child process under the bootstrap with allocation tracking on, as the
runner starts it; the captures it leaves are then read as memgauge reads them after a run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memgauge._env import ENV_ALLOC, ENV_EVENTS_DIR
from memgauge.capture._alloc_read import _Capture, _reconcile, read_allocations
from memgauge.capture._events import BOOTSTRAP_FILE
from memgauge.capture._events_read import read_events
from memgauge.capture._frames import is_library, is_own
from memgauge.model._profile import AllocationPeak, Attribution, CaptureWarning, Reconciliation
from tests.conftest import MIB, PROGRAMS, marker

pytest.importorskip("memray")


def run_tracked(script: Path, tmp_path: Path) -> tuple[str, str, dict[int, int]]:
    """Run ``script`` under the bootstrap with tracking on: (events directory, stdout, VmHWM of each
    process that reported its exit)."""
    events = tmp_path / "events"
    events.mkdir()
    env = {**os.environ, ENV_EVENTS_DIR: str(events), ENV_ALLOC: "1"}
    env.pop("MEMGAUGE_LINES", None)
    proc = subprocess.run(
        [sys.executable, BOOTSTRAP_FILE, "script", str(script)],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    hwm = {int(e["pid"]): int(e["hwm"]) for e in read_events(events) if e["ev"] == "exit"}
    return str(events), proc.stdout, hwm


def line_with(script: Path, text: str) -> int:
    numbers = [n for n, t in enumerate(script.read_text().splitlines(), start=1) if t.strip() == text]
    assert len(numbers) == 1, (script, text, numbers)
    return numbers[0]


def entry(peak: AllocationPeak, script: Path, tag: str) -> Attribution:
    line = marker(script, tag)
    found = [a for a in peak.attribution if a.file == os.path.abspath(script) and a.line == line]
    assert len(found) == 1, [(a.file, a.line, a.bytes) for a in peak.attribution]
    return found[0]


def only(reconciliation: list[Reconciliation], pid: int) -> Reconciliation:
    found = [r for r in reconciliation if r.pid == pid]
    assert len(found) == 1, reconciliation
    return found[0]


def test_untouched_gigabyte_and_written_lines_and_reconciliation(tmp_path: Path) -> None:
    script = PROGRAMS / "alloc_untouched.py"
    events, stdout, hwm = run_tracked(script, tmp_path)
    assert stdout.split() == ["1024", "300"]
    (pid,) = hwm
    peak, reconciliation, _ = read_allocations(events, hwm)
    assert peak is not None
    assert peak.processes == {str(pid): peak.bytes}
    # both arrays alive together: at least the 1 GiB and the 300 MiB the program allocated
    assert peak.bytes >= (1024 + 300) * MIB
    untouched, written = entry(peak, script, "untouched"), entry(peak, script, "written")
    assert (untouched.pid, untouched.function) == (pid, "main")
    assert 1024 * MIB <= untouched.bytes < 1025 * MIB
    assert 300 * MIB <= written.bytes < 301 * MIB
    assert peak.attribution[:2] == [untouched, written]
    assert untouched.source == "untouched = np.empty(1024 * MIB, dtype=np.uint8)  # ALLOC: untouched"
    assert untouched.stack == [f"{os.path.abspath(script)}:{line_with(script, 'main()')}"]

    r = only(reconciliation, pid)
    assert r.resident_peak_bytes == hwm[pid]
    assert r.allocation_peak_bytes == peak.bytes
    assert abs(r.untouched_bytes - 1024 * MIB) <= 0.10 * 1024 * MIB, r
    # the never-written gigabyte is not in the resident peak: the written 300 MiB are
    assert r.resident_peak_bytes < r.baseline_bytes + 600 * MIB
    assert r.resident_peak_bytes >= r.baseline_bytes + 300 * MIB
    assert r.baseline_bytes > 0
    # the split adds up, up to a clamp of a negative remainder, which then says so in a note
    rest = r.resident_peak_bytes - r.baseline_bytes - (r.allocation_peak_bytes - r.untouched_bytes)
    if rest >= 0:
        assert r.other_bytes == rest
    else:
        assert r.other_bytes == 0
        assert any("set to 0" in n for n in r.notes), r.notes


def test_freed_spike_is_the_allocation_peak(tmp_path: Path) -> None:
    script = PROGRAMS / "alloc_spike.py"
    events, stdout, hwm = run_tracked(script, tmp_path)
    assert stdout.strip() == "200"
    peak, reconciliation, _ = read_allocations(events, hwm)
    assert peak is not None
    # 200 MiB kept plus the 800 MiB spike, alive together inside spike()
    assert abs(peak.bytes - 1000 * MIB) <= 0.05 * 1000 * MIB, peak.bytes
    first = peak.attribution[0]
    spike = entry(peak, script, "spike")
    assert first == spike
    assert spike.function == "spike"
    assert 800 * MIB <= spike.bytes < 801 * MIB
    assert entry(peak, script, "kept").bytes >= 200 * MIB
    # the spike's caller chain: main() called spike(), the module called main()
    assert [s.rsplit(":", 1)[1] for s in spike.stack] == [
        str(line_with(script, "main()")),
        str(line_with(script, "spike()")),
    ]
    (r,) = reconciliation
    # every allocated page was written: nothing of the peak is missing from the resident peak
    assert r.untouched_bytes <= 0.05 * peak.bytes, r


def test_forked_child_gets_its_own_capture(tmp_path: Path) -> None:
    script = PROGRAMS / "alloc_fork.py"
    events, stdout, hwm = run_tracked(script, tmp_path)
    lines = dict((w[0], w[1:]) for w in (line.split() for line in stdout.splitlines()))
    assert lines["parent"] == ["0", "50"]
    child_pid, child_hwm = int(lines["child"][0]), int(lines["child"][1])
    (parent_pid,) = hwm  # the child left through os._exit: only the parent reported its exit
    assert child_pid != parent_pid
    assert os.path.exists(os.path.join(events, f"alloc.{child_pid}.bin"))
    assert os.path.exists(os.path.join(events, f"alloc.{child_pid}.json"))

    peak, reconciliation, _ = read_allocations(events, {**hwm, child_pid: child_hwm})
    assert peak is not None
    assert set(peak.processes) == {str(parent_pid), str(child_pid)}
    assert peak.processes[str(child_pid)] >= 300 * MIB
    # the child's tracker starts empty: the parent's 50 MiB are not counted again
    assert peak.processes[str(child_pid)] < 300 * MIB + 50 * MIB
    assert 50 * MIB <= peak.processes[str(parent_pid)] < 300 * MIB
    assert peak.bytes == sum(peak.processes.values())
    child = entry(peak, script, "child")
    assert (child.pid, child.function) == (child_pid, "child")
    assert 300 * MIB <= child.bytes < 301 * MIB
    assert entry(peak, script, "parent").pid == parent_pid

    r = only(reconciliation, child_pid)
    # the fork child's baseline is everything it inherited resident, the parent's 50 MiB included
    assert r.baseline_bytes >= 50 * MIB
    assert r.untouched_bytes <= 0.05 * 300 * MIB, r
    only(reconciliation, parent_pid)


def test_torch_tensor_line(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    script = PROGRAMS / "alloc_torch.py"
    events, stdout, hwm = run_tracked(script, tmp_path)
    assert stdout.strip() == "400"
    peak, _, _ = read_allocations(events, hwm)
    assert peak is not None
    tensor = entry(peak, script, "tensor")
    assert tensor.bytes >= 400 * MIB
    assert tensor is peak.attribution[0]
    assert peak.bytes >= 400 * MIB


def test_library_allocations_fold_into_the_calling_line(tmp_path: Path) -> None:
    script = PROGRAMS / "alloc_library.py"
    events, stdout, hwm = run_tracked(script, tmp_path)
    assert stdout.split() == ["200", "4"]
    numpy_line, json_line = marker(script, "numpy"), marker(script, "json")
    user = os.path.abspath(script)

    folded, _, _ = read_allocations(events, hwm)
    assert folded is not None
    assert entry(folded, script, "numpy").bytes >= 200 * MIB
    # json.loads builds a list of 4 Mi references: at least 8 bytes each
    assert entry(folded, script, "json").bytes >= 32 * MIB
    assert not any(is_library(a.file) for a in folded.attribution[:2])
    assert all(not is_library(s.rsplit(":", 1)[0]) for a in folded.attribution for s in a.stack)

    unfolded, _, _ = read_allocations(events, hwm, lib=True)
    assert unfolded is not None
    assert unfolded.bytes == folded.bytes
    numpy_entry = unfolded.attribution[0]
    assert numpy_entry.file.endswith(os.path.join("numpy", "_core", "numeric.py"))
    assert numpy_entry.function == "ones"
    assert numpy_entry.stack[-1] == f"{user}:{numpy_line}"
    json_entry = next(a for a in unfolded.attribution if f"{user}:{json_line}" in a.stack)
    assert is_library(json_entry.file)
    assert json_entry.file.endswith(os.path.join("json", "decoder.py"))
    # the bootstrap's own frames never show, even unfolded
    callers = [s.rsplit(":", 1)[0] for a in unfolded.attribution for s in a.stack]
    assert not any(is_own(f) or "runpy" in f for f in callers), callers


def test_top_keeps_the_largest_lines(tmp_path: Path) -> None:
    script = PROGRAMS / "alloc_spike.py"
    events, _, hwm = run_tracked(script, tmp_path)
    peak, _, _ = read_allocations(events, hwm, top=1)
    assert peak is not None
    assert [a.line for a in peak.attribution] == [marker(script, "spike")]
    everything, _, _ = read_allocations(events, hwm, top=10_000)
    assert everything is not None
    assert sum(a.bytes for a in everything.attribution) == everything.bytes
    files = {a.file for a in everything.attribution}
    assert all(os.path.isabs(f) or f.startswith("<") for f in files), files
    assert not any(is_own(f) for f in files), files
    # a process missing from resident_peaks gets no reconciliation
    assert read_allocations(events, {})[1] == []


def test_no_captures(tmp_path: Path) -> None:
    assert read_allocations(str(tmp_path), {1: 1}) == (None, [], {})
    assert read_allocations(str(tmp_path / "gone"), {}) == (None, [], {})
    # what a process killed before its tracker stopped leaves: an empty or torn capture
    (tmp_path / "alloc.123.bin").write_bytes(b"")
    (tmp_path / "alloc.124.bin").write_bytes(b"memray\x00garbage")
    warnings: list[CaptureWarning] = []
    assert read_allocations(str(tmp_path), {123: 1, 124: 1}, warnings=warnings) == (None, [], {})
    assert [w.file for w in warnings] == ["alloc.123.bin", "alloc.124.bin"]
    assert all("its allocations are missing" in w.message for w in warnings)


@pytest.mark.parametrize("setup", ["sys.modules['memray'] = None", "pass"])
def test_tracking_never_breaks_the_program(tmp_path: Path, setup: str) -> None:
    """memray missing, or an events directory that does not exist: the program runs untracked."""
    code = (
        f"import sys; {setup}\n"
        "from memgauge.capture import _alloc\n"
        "_alloc.start(sys.argv[1]); _alloc.start(sys.argv[1])\n"
        "import os; os.fork() or os._exit(3)\n"
        "print('ran')\n"
    )
    missing = tmp_path / "missing"
    proc = subprocess.run(
        [sys.executable, "-c", code, str(missing)], capture_output=True, text=True, timeout=60
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "ran\n", "")
    assert not missing.exists()


def test_os_exit_still_writes_the_capture(tmp_path: Path) -> None:
    code = (
        "import sys, os\n"
        "from memgauge.capture import _alloc\n"
        "_alloc.start(sys.argv[1])\n"
        "block = bytearray(64 << 20)\n"
        "os._exit(5)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, timeout=60)
    assert proc.returncode == 5, proc.stderr
    peak, _, _ = read_allocations(str(tmp_path), {})
    assert peak is not None
    assert len(peak.processes) == 1
    top = peak.attribution[0]
    assert (top.file, top.line, top.function) == ("<string>", 4, "<module>")
    assert top.bytes >= 64 * MIB


def test_a_baseline_of_an_unknown_wire_version_is_a_warning_not_a_figure(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from memgauge.capture import _alloc\n"
        "_alloc.start(sys.argv[1])\n"
        "block = bytearray(8 << 20)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    (capture,) = tmp_path.glob("alloc.*.bin")
    pid = int(capture.name.split(".")[1])
    baseline = tmp_path / f"alloc.{pid}.json"
    from memgauge.capture import WIRE_VERSION

    assert json.loads(baseline.read_text())["v"] == WIRE_VERSION  # written in the wire format
    baseline.write_text('{"v": 9, "baseline": 1, "t": 0.0}')
    warnings: list[CaptureWarning] = []
    _, (reconciliation,), _ = read_allocations(str(tmp_path), {pid: 100 * MIB}, warnings=warnings)
    assert any("no baseline was recorded" in note for note in reconciliation.notes)
    assert [(w.file, w.message.split(",")[0]) for w in warnings] == [(baseline.name, "wire format version 9")]


def test_reconciliation_clamps_a_negative_remainder_with_a_note() -> None:
    # allocation peak above what the resident peak can hold, with every allocation seemingly written
    capture = _Capture(pid=7, peak=500 * MIB, records=[], snapshots=[(100 * MIB, 0), (700 * MIB, 500 * MIB)])
    r = _reconcile(capture, resident=400 * MIB, baseline=100 * MIB)
    assert (r.untouched_bytes, r.other_bytes) == (0, 0)
    assert any("other came out -200.0 MiB and was set to 0" in n for n in r.notes), r.notes
    # a shortfall within the kernel counters' precision says so instead
    r = _reconcile(capture, resident=599 * MIB, baseline=100 * MIB)
    assert r.other_bytes == 0
    assert any("precision" in n for n in r.notes), r.notes
    # no baseline file: memray's first snapshot stands in, and a note says so
    r = _reconcile(capture, resident=700 * MIB, baseline=None)
    assert r.baseline_bytes == 100 * MIB
    assert r.other_bytes == 100 * MIB
    assert any("first memory snapshot" in n for n in r.notes), r.notes


def test_reconciliation_of_a_peak_between_snapshots_says_so() -> None:
    capture = _Capture(pid=7, peak=500 * MIB, records=[], snapshots=[(100 * MIB, 0), (150 * MIB, 50 * MIB)])
    r = _reconcile(capture, resident=620 * MIB, baseline=100 * MIB)
    assert r.untouched_bytes == 0
    assert r.other_bytes == 20 * MIB
    assert any("lasted less than" in n for n in r.notes), r.notes


MP_EXAMPLE = (
    "import time\n\n\ndef my_func():\n    a = [1] * 10\n    b = [2] * (3 * 10**7)\n"
    "    time.sleep(0.4)\n    s = a + b\n    time.sleep(0.4)\n    return s\n\n\nkept = my_func()\n"
)


def test_with_alloc_the_resident_and_allocation_tables_name_the_same_lines(tmp_path: Path) -> None:
    """memory_profiler's example: ``b`` is freed when ``my_func`` returns and ``s`` is kept. With
    ``--alloc`` what is held at exit is memray's live allocations by the line that made them (``s``,
    line 8), where the resident ledger alone named ``b``; and where the lines were read from outside,
    the resident table gives each allocating line what memray's table gives it."""
    from memgauge.watcher import outside_refusal
    from tests.conftest import run_memgauge

    script = tmp_path / "mp_example.py"
    script.write_text(MP_EXAMPLE)
    r = run_memgauge(["--alloc", "--line-sampler", "auto", str(script)], tmp_path)
    assert r.returncode == 0 and r.profile is not None, r.stderr
    size = 8 * 3 * 10**7
    held = {h["line"]: h["bytes"] for h in r.profile["held_at_exit"] if h["file"] == str(script)}
    assert held.get(8, 0) >= 0.95 * size and held.get(6, 0) < 8 * MIB, held
    assert r.profile["environment"]["measurement"]["held_at_exit"].startswith("memray")
    assert "still held at exit (memray: allocations live at exit)" in r.stderr
    if outside_refusal() is None:

        def by_line(rows: list[dict[str, Any]]) -> dict[int, int]:
            return {a["line"]: a["bytes"] for a in rows if a["file"] == str(script)}

        resident = by_line(r.profile["peak"]["attribution"])
        allocated = by_line(r.profile["allocation_peak"]["attribution"])
        for line in (6, 8):
            gap = abs(resident.get(line, 0) - allocated[line])
            # the report too: an empty resident table is a failed join, which it says why
            assert gap <= 0.1 * allocated[line], (resident, allocated, r.stderr[-3000:])
