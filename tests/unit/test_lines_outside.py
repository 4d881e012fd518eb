"""The outside line sampler's pure parts: py-spy's chrome trace read as spans per thread, the join
of spans and /proc polls into the lines wire record (read back by the one reader), and the ptrace
checks. Built by construction: no process is started."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from memgauge.capture import join_outside_lines, read_lines
from memgauge.capture._bytecode import blocked_line_of_source
from memgauge.capture._lines_join import _within
from memgauge.capture._lines_spans import Poll, bootstrap_spans, first_span_back, snap_spans
from memgauge.watcher import outside_refusal
from memgauge.watcher._outside import OLD_PYTHON, trace_spans

MIB = 1 << 20
USER = "/work/app/train.py"
LIB = "/usr/lib/python3.11/site-packages/numpy/core/numeric.py"


def _event(
    ph: str, ts_us: int, name: str, filename: str = "", line: int = 0, tid: int = 77
) -> dict[str, object]:
    return {
        "ph": ph,
        "ts": ts_us,
        "pid": 10,
        "tid": tid,
        "name": name,
        "cat": "py-spy",
        "args": {"filename": filename, "line": line},
    }


def test_a_chrome_trace_becomes_spans_per_native_thread_innermost_first() -> None:
    events = [
        _event("B", 0, "thread (10)"),
        _event("B", 0, "<module>", USER, 3),
        _event("B", 0, "ones", LIB, 9),
        _event("E", 20_000, "ones", LIB, 9),
        _event("E", 20_000, "<module>", USER, 3),
        _event("B", 20_000, "<module>", USER, 4),
        _event("E", 50_000, "<module>", USER, 4),
        _event("E", 50_000, "thread (10)"),
    ]
    spans = trace_spans(events, origin=100.0)
    assert list(spans) == [10] and list(spans[10]) == [10]
    (s1, e1, f1), (s2, e2, f2) = spans[10][10]
    assert (s1, e1, s2, e2) == (100.0, 100.02, 100.02, 100.05)
    assert f1 == [(LIB, 9, "ones"), (USER, 3, "<module>")]  # the pseudo-frame of the thread dropped
    assert f2 == [(USER, 4, "<module>")]


def _poll(
    t: float, rss: int, run_ms: float, running: bool
) -> tuple[float, int, dict[int, tuple[int, int, bool]]]:
    return (t, rss, {10: (int(run_ms * 1e6), 0, running)})


def test_the_join_charges_growth_to_the_line_running_in_c_and_none_to_the_sleep(tmp_path: Path) -> None:
    # line 3 allocates 200 MiB over 100 ms on a CPU (one C call), line 4 sleeps 100 ms
    polls = [_poll(0.0, 50 * MIB, 0, True)]
    for i in range(1, 11):
        polls.append(_poll(i * 0.01, (50 + 20 * i) * MIB, i * 10, True))
    for i in range(11, 21):
        polls.append(_poll(i * 0.01, 250 * MIB, 100, False))
    spans = {10: [(0.0, 0.1, [(LIB, 9, "ones"), (USER, 3, "<module>")]), (0.1, 0.2, [(USER, 4, "<module>")])]}
    assert join_outside_lines(str(tmp_path), 10, polls, spans, lib=False, interval=0.0)
    record = json.loads((tmp_path / "lines.10.json").read_text())
    assert record["sampler"] == "outside"
    data = read_lines(str(tmp_path), 0.0)
    by_line = {s.line: s for s in data.lines if s.file == USER}
    assert by_line[3].resident_growth_bytes == 200 * MIB
    assert by_line[4].resident_growth_bytes == 0
    assert abs(by_line[3].cpu_python_seconds - 0.1) < 1e-6 and by_line[4].cpu_python_seconds == 0
    assert abs(by_line[4].wait_seconds - 0.1) < 1e-6
    peak = {(a.file, a.line): a.bytes for a in data.attribution}
    assert peak[(USER, 3)] == 200 * MIB


def test_a_spike_built_and_freed_between_two_polls_is_charged_at_the_kernels_high_water_mark(
    tmp_path: Path,
) -> None:
    # line 3 builds 200 MiB over 100 ms, polls see 190 MiB of it, then it is freed before the next
    # poll: the poller read VmHWM (250 MiB) where the size came down
    polls = [_poll(0.0, 50 * MIB, 0, True)]
    polls += [_poll(i * 0.01, (50 + 19 * i) * MIB, i * 10, True) for i in range(1, 11)]
    polls += [_poll(0.11, 50 * MIB, 110, True), _poll(0.12, 50 * MIB, 110, False)]
    spans = {10: [(0.0, 0.11, [(USER, 3, "<module>")]), (0.11, 0.12, [(USER, 4, "<module>")])]}
    peaks = {0.11: 250 * MIB}
    assert join_outside_lines(str(tmp_path), 10, polls, spans, lib=False, interval=0.0, peaks=peaks)
    peak = {(a.file, a.line): a.bytes for a in read_lines(str(tmp_path), 0.0).attribution}
    assert peak[(USER, 3)] == 200 * MIB and (USER, 4) not in peak, peak
    # without the mark, the top 10 MiB made after the last poll before the fall is no line's
    (tmp_path / "unmarked").mkdir()
    assert join_outside_lines(str(tmp_path / "unmarked"), 10, polls, spans, lib=False, interval=0.0)
    peak = {(a.file, a.line): a.bytes for a in read_lines(str(tmp_path / "unmarked"), 0.0).attribution}
    assert peak[(USER, 3)] == 190 * MIB


def test_a_c_calls_stack_seen_late_gets_its_growth_from_the_kernels_counters(tmp_path: Path) -> None:
    # truth: line 2 sleeps 0-0.2 s, line 3 allocates 400 MiB on a CPU 0.2-0.4 s, line 4 sleeps to
    # 0.6 s; py-spy's trace has every change 30 ms late (its sampling thread stalled): without the
    # threads' CPU counters, 60 MiB went to the sleeps
    polls = []
    for i in range(61):
        t = i * 0.01
        on = min(max(t - 0.2, 0.0), 0.2)  # seconds on a CPU so far
        polls.append(_poll(t, int(50 * MIB + on * 2000 * MIB), on * 1000, 0.2 < t <= 0.4))
    late = 0.03
    spans = {
        10: [
            (0.0, 0.2 + late, [(USER, 2, "<module>")]),
            (0.2 + late, 0.4 + late, [(LIB, 9, "ones"), (USER, 3, "<module>")]),
            (0.4 + late, 0.6, [(USER, 4, "<module>")]),
        ]
    }
    assert join_outside_lines(str(tmp_path), 10, polls, spans, lib=False, interval=0.0)
    by_line = {s.line: s for s in read_lines(str(tmp_path), 0.0).lines if s.file == USER}
    assert by_line[3].resident_growth_bytes >= 0.97 * 400 * MIB, by_line
    assert abs(by_line[3].cpu_python_seconds - 0.2) < 0.01, by_line


def test_a_process_that_sampled_itself_keeps_its_own_record(tmp_path: Path) -> None:
    own = {
        "v": 2,
        "pid": 10,
        "t_end": 1.0,
        "keys": [[USER, 3, "f"]],
        "lines": [[0, 0.1, 0, 0, 5, 1]],
        "stacks": {},
        "peak": {"rss": 1, "retained": []},
        "series": [],
        "imports": [],
    }
    (tmp_path / "lines.10.json").write_text(json.dumps(own))
    polls = [_poll(0.0, MIB, 0, True), _poll(0.01, 2 * MIB, 10, True)]
    assert not join_outside_lines(str(tmp_path), 10, polls, {10: []}, lib=False, interval=0.01)
    assert json.loads((tmp_path / "lines.10.json").read_text()) == own


def test_yama_scopes_that_forbid_reading_a_sibling_are_named(tmp_path: Path) -> None:
    scope = tmp_path / "ptrace_scope"
    scope.write_text("3\n")
    assert outside_refusal(str(scope)) == "Yama ptrace_scope 3 forbids reading another process"
    scope.write_text("0\n")
    # Yama permits it: the interpreter's refusal, or py-spy's absence
    allowed = (OLD_PYTHON,) if sys.version_info < (3, 11) else (None, "py-spy is not installed")
    assert outside_refusal(str(scope)) in allowed
    assert outside_refusal(str(tmp_path / "absent")) in allowed


def test_the_spans_found_by_bisection_are_those_a_scan_finds() -> None:
    # one thread's stack over time: spans one after the other, some with gaps (py-spy saw no stack)
    rng = random.Random(31)
    spans, t = [], 0.0
    for i in range(400):
        t += rng.choice((0.0, 0.0, rng.uniform(0, 0.03)))
        end = t + rng.uniform(0.001, 0.05)
        spans.append((t, end, [(USER, i, "f")]))
        t = end
    starts = [s for s, _, _ in spans]
    for _ in range(500):
        ta = rng.uniform(-0.1, t + 0.1)
        tb = ta + rng.choice((rng.uniform(0, 0.02), rng.uniform(0, 1.0)))
        scanned = [(min(e, tb) - max(s, ta), f) for s, e, f in spans if s < tb and e > ta]
        assert _within(spans, starts, ta, tb) == [(d, f) for d, f in scanned if d > 0]


def test_runpy_importing_the_bootstrap_before_the_program_started_is_no_line() -> None:
    runpy = f"{sys.prefix}/lib/python3.11/runpy.py"
    importing = [
        ("<frozen importlib._bootstrap>", 241, "_call_with_frames_removed"),
        (runpy, 198, "_run_module_as_main"),
    ]
    script = ("/work/job.py", 3, "<module>")
    program = [("/usr/lib/python3.11/json/encoder.py", 200, "encode"), script, (runpy, 88, "_run_code")]
    spans = [(0.0, 0.1, importing), (0.1, 0.5, program), (0.6, 0.7, importing)]
    # before the program's start (0.2): memgauge's start-up; after it: a program run with -m
    assert bootstrap_spans(spans, 0.2) == spans[1:]


def test_a_sleep_lines_growth_goes_to_the_line_before_it_that_builds(tmp_path: Path) -> None:
    script = tmp_path / "loop.py"
    script.write_text(
        "import time\nkept = []\n\n\ndef handle():\n    kept.append(bytearray(b'x' * 1024))\n"
        "    time.sleep(0.01)\n\n\nclass C:\n    def wait(self):\n        time.sleep(1)\n"
    )
    assert blocked_line_of_source(str(script), "handle", 7) == 6
    # a sleep first in its function builds nothing before it; a file that is gone is no answer
    assert blocked_line_of_source(str(script), "wait", 12) is None
    assert blocked_line_of_source(str(tmp_path / "gone.py"), "handle", 7) is None


def test_a_c_call_begun_before_the_first_sample_gets_its_earlier_growth() -> None:
    tid = 7
    line = [("/work/job.py", 3, "build")]
    # 10 ms polls: start-up grows slowly (1 MiB a poll), then the call grows 60 MiB a poll from
    # 0.03 s, first seen by py-spy at 0.061 s; the thread ran throughout
    polls = _running_polls([0, 1, 1, 60, 60, 60, 60, 60, 60], tid)
    spans = [(0.061, 0.09, line)]
    # back to 0.02, and into the interval before by its 1 MiB at the call's 60 MiB a poll
    (start, end, frames), *_ = first_span_back(spans, polls, tid)
    assert (end, frames) == (0.09, line) and start == pytest.approx(0.02 - 0.01 / 60)
    # memgauge's bootstrap seen before the program's first line ends where the call now begins
    import memgauge.capture._sampling as own

    bootstrap = [(own.__file__, 200, "start_from_env")]
    moved = first_span_back([(0.0, 0.061, bootstrap), *spans], polls, tid)
    assert [(f, e) for _, e, f in moved] == [(bootstrap, start), (line, 0.09)]
    # a thread that slept before the first sample keeps its span where py-spy put it
    asleep = [(t, r, {tid: (0 if t < 0.06 else 1, 0, False)}) for t, r, _ in polls]
    assert first_span_back(spans, asleep, tid) == spans
    # nor back past the program's start: what grew fast before it was memgauge's own start
    # (memray's tracker), no line of the program's
    (start, _, _), *_ = first_span_back(spans, polls, tid, not_before=0.045)
    assert start == 0.045
    # a start the bootstrap wrote after py-spy's first read moves nothing forward
    assert first_span_back(spans, polls, tid, not_before=0.07)[0][0] == 0.061


def _running_polls(growth_mib: list[int], tid: int) -> list[Poll]:
    """10 ms polls of a thread that ran throughout, the process growing by ``growth_mib`` each."""
    polls: list[Poll] = []
    rss = 10 * MIB
    for i, g in enumerate(growth_mib):
        rss += g * MIB
        polls.append((i * 0.01, rss, {tid: (i * 10_000_000, 0, True)}))
    return polls


def test_a_change_between_two_running_lines_moves_to_where_the_growth_jumps() -> None:
    tid = 7
    imports, ones = [(USER, 1, "<module>")], [(USER, 2, "<module>")]
    busy = {imports[0]: 1.0, ones[0]: 1.0}
    # `import numpy` grows 1 MiB a poll to 0.1 s, then `np.ones` 30 MiB a poll to 0.3 s; py-spy
    # put the change 40 ms late
    polls = _running_polls([0] + [1] * 10 + [30] * 20, tid)
    late = [(0.0, 0.14, imports), (0.14, 0.3, ones)]
    (_, edge, _), (start, _, _) = snap_spans(late, polls, tid, busy, lib=False)
    assert edge == start == pytest.approx(0.1, abs=0.002)
    # placed right, it stays within a poll of where it was
    right = [(0.0, 0.1, imports), (0.1, 0.3, ones)]
    assert snap_spans(right, polls, tid, busy, lib=False)[1][0] == pytest.approx(0.1, abs=0.002)
    # two C calls back to back that grow alike: the growth cannot place the change, py-spy's stays
    alike = _running_polls([0] + [30] * 30, tid)
    assert snap_spans(late, alike, tid, busy, lib=False) == late
    # never back more than SNAP (50 ms) however late py-spy was
    later = [(0.0, 0.16, imports), (0.16, 0.3, ones)]
    assert snap_spans(later, polls, tid, busy, lib=False)[1][0] == pytest.approx(0.11)
