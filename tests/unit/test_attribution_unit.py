"""Exact answers for the pure parts of line attribution: the leak fit, the ledger's last-in-first-out
accounting, the stalled-line recovery from bytecode, and path shortening."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import weakref
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from memgauge.analysis import leak_suspects, short_path
from memgauge.analysis._leaks import fit_growth
from memgauge.analysis._lines import _is_library_path
from memgauge.capture._bytecode import stalled_keys, stalled_line
from memgauge.capture._frames import StackReader
from memgauge.capture._sampler import STARTUP_KEY, Sampler
from memgauge.capture._sampler_charge import charge_cpu, charge_memory
from memgauge.capture._wire import CPU_NATIVE, CPU_PYTHON

if TYPE_CHECKING:
    from memgauge.capture._sampler_charge import Seen

MIB = 1 << 20


def test_steady_growth_is_a_leak_with_its_slope() -> None:
    points = [(t / 10, int(2 * MIB * t / 10)) for t in range(1, 51)]  # 2 MiB/s for 5 s
    fit = fit_growth(points, t_end=5.0)
    assert fit is not None
    rate, r2, first, last = fit
    assert abs(rate - 2 * MIB) / (2 * MIB) < 0.05 and r2 > 0.99 and first == 0.2 and last == 5.0


def test_burst_then_flat_is_not_a_leak() -> None:
    points = [(0.1 * i, 50 * MIB * i) for i in range(1, 6)]  # 250 MiB in 0.5 s, then nothing
    assert fit_growth(points, t_end=10.0) is None


def test_released_memory_is_not_a_leak() -> None:
    points = [(0.1 * i, MIB * i) for i in range(1, 40)] + [(4.0, 5 * MIB)]
    assert fit_growth(points, t_end=4.5) is None


def test_deepest_line_with_the_same_rate_is_kept() -> None:
    growth = [(t / 10, int(MIB * t / 10)) for t in range(1, 41)]
    series = {
        "caller": growth,
        "callee": growth,
        "other": [(t / 10, int(3 * MIB * t / 10)) for t in range(1, 41)],
    }
    found = leak_suspects(series, 4.0, [("caller", "callee")])
    assert [f.key for f in found] == ["other", "callee"]
    # a callee explaining only part of the caller's growth: the caller is the suspect
    half = [(t, b // 2) for t, b in growth]
    found = leak_suspects({"caller": growth, "callee": half}, 4.0, [("caller", "callee")])
    assert "caller" in [f.key for f in found]


def _sampler(tmp_path: Path) -> Sampler:
    clock = iter(float(i) for i in range(1000))
    return Sampler(str(tmp_path), clock=lambda: next(clock))


def test_ledger_releases_the_latest_growth_first(tmp_path: Path) -> None:
    s = _sampler(tmp_path)
    a, b = ("f.py", 1, "f"), ("f.py", 2, "f")
    base = s.rss
    ledger = s.ledger
    ledger.credit(ledger.stack_id((a,)), 200 * MIB, 1.0)
    ledger.credit(ledger.stack_id((b,)), 800 * MIB, 2.0)
    ledger.release(800 * MIB, 3.0)
    by_key = {ledger.stacks[sid][-1]: size for sid, size in ledger.retained.items()}
    assert by_key == {STARTUP_KEY: base, a: 200 * MIB}
    assert ledger.inclusive[b] == 0 and ledger.series[b][-1] == (3.0, 0)


def test_growth_no_sampled_line_explains_is_the_programs_once_it_started(tmp_path: Path) -> None:
    # a program that ran to its end between two samples (CI: all 20 MiB of a short script went to
    # `<startup>` in one sandboxed run of three): the bootstrap names the program as it starts it
    before, after = _sampler(tmp_path), _sampler(tmp_path)
    program = ("/work/main.py", 0, "<module>")
    after.program_key = program
    for s in (before, after):
        charge_memory(s, 5.0, s.rss + 20 * MIB, [])
    first = {before.ledger.stacks[sid][-1]: n for sid, n in before.ledger.retained.items()}
    second = {after.ledger.stacks[sid][-1]: n for sid, n in after.ledger.retained.items()}
    assert first == {STARTUP_KEY: before.rss}  # before the program: start-up's, as always
    assert second == {STARTUP_KEY: after.rss - 20 * MIB, program: 20 * MIB}


def _high_water_file(tmp_path: Path, hwm: int) -> int:
    """A descriptor the sampler reads as ``/proc/self/status``, with ``hwm`` as VmHWM."""
    path = tmp_path / "status"
    path.write_text(f"Name:\tpython\nVmHWM:\t{hwm // 1024} kB\nVmRSS:\t1 kB\n")
    return os.open(path, os.O_RDONLY)


def _sample(s: Sampler, t: float, rss: int, seen: list[Seen]) -> None:
    charge_cpu(s, seen, 0.0, 10e6)  # as the sampler does first: every seen line has its stats
    charge_memory(s, t, rss, seen)


def test_a_peak_between_samples_goes_to_the_line_that_grew_last_and_ended(tmp_path: Path) -> None:
    # a thread's numpy fill lets the GIL go: a sample sees it part way (300 MiB of 500), then the
    # fill ends, its buffer is freed and the thread is gone before the next sample, which sees
    # memory back down and no thread of it; the kernel's high-water mark says the process went
    # 200 MiB higher: that goes to the thread's line (it was no line's: 62% of its bytes, CI)
    s = _sampler(tmp_path)
    work, join = ("/proj/app.py", 12, "work"), ("/proj/app.py", 20, "<module>")
    base = s.rss
    _sample(s, 1.0, base + 300 * MIB, [([join], 0.0, False, None, 0.0), ([work], 9e6, True, None, 0.0)])
    s.status = _high_water_file(tmp_path, base + 500 * MIB)
    try:
        _sample(s, 2.0, base, [([join], 0.0, False, None, 0.0)])
    finally:
        os.close(s.status)
        s.status = -1
    peak = {s.ledger.stacks[sid][-1]: n for sid, n in s.peak_retained.items()}
    assert s.max_rss == base + 500 * MIB and peak[work] == 500 * MIB and join not in peak


def test_a_peak_between_samples_of_running_lines_goes_to_them(tmp_path: Path) -> None:
    # memory down since the last sample, no line that grew then has ended: the lines that ran
    s = _sampler(tmp_path)
    line = ("/proj/app.py", 3, "run")
    base = s.rss
    _sample(s, 1.0, base + 100 * MIB, [([line], 9e6, False, None, 0.0)])
    s.status = _high_water_file(tmp_path, base + 400 * MIB)
    try:
        _sample(s, 2.0, base + 50 * MIB, [([line], 9e6, False, None, 0.0)])
    finally:
        os.close(s.status)
        s.status = -1
    peak = {s.ledger.stacks[sid][-1]: n for sid, n in s.peak_retained.items()}
    assert s.max_rss == base + 400 * MIB and peak[line] == 400 * MIB


def test_ledger_stays_bounded(tmp_path: Path) -> None:
    s = _sampler(tmp_path)
    keys = [("f.py", i, "f") for i in range(2)]
    for i in range(10_000):
        s.ledger.credit(s.ledger.stack_id((keys[i % 2],)), 1, float(i))
    assert len(s.ledger.entries) <= 4097
    assert sum(size for _, size in s.ledger.entries) == s.rss + 10_000


def _stalled(source: str) -> int | None:
    """Run ``source``'s ``run()``, stopping in ``probe`` to capture the caller's code object and
    current instruction, as the sampler sees them after a stall."""
    seen: dict[str, object] = {}

    def probe(*_args: object) -> int:
        frame = sys._getframe(1)
        seen["code"], seen["lasti"] = frame.f_code, frame.f_lasti
        return 0

    namespace: dict[str, object] = {"probe": probe, "N": 10}
    exec(compile(source, "<test>", "exec"), namespace)
    namespace["run"]()  # type: ignore[operator]
    return stalled_line(seen["code"], seen["lasti"])  # type: ignore[arg-type]


def test_stall_in_sequence_repetition_is_charged_to_its_line_not_the_next_call() -> None:
    source = "def run():\n    block = b'x' * N\n    probe(block)\n"
    assert _stalled(source) == 2


def test_stall_in_a_call_is_charged_to_the_call() -> None:
    source = "def run():\n    y = 1\n    probe(y)\n"
    assert _stalled(source) == 3


def test_quick_builtins_are_never_blamed() -> None:
    source = "def run():\n    block = b'x' * N\n    probe(len(block))\n"
    assert _stalled(source) == 2


def _seen_in(source: str, event: str) -> tuple[list[tuple[str, int, str]], object]:
    """The keys and position the line sampler reads for ``callee`` of ``source``'s ``run()`` at
    its ``event`` ("call": just entered, at its first instruction; "return": leaving)."""
    reader, found = StackReader(lib=False), {}

    def tracer(frame: FrameType, what: str, _arg: object) -> object:
        if frame.f_code.co_name != "callee":
            return None
        if what == event:
            found["keys"] = keys = reader.keys(frame)
            found["position"] = reader._position(frame, keys)
        return tracer  # the callee's own events (its return) come to its local tracer

    namespace: dict[str, object] = {"N": 10}
    exec(compile(source, "/proj/app.py", "exec"), namespace)
    sys.settrace(tracer)
    try:
        namespace["run"]()  # type: ignore[operator]
    finally:
        sys.settrace(None)
    return found["keys"], found["position"]  # type: ignore[return-value]


def test_a_stall_seen_as_a_function_is_entered_is_charged_to_the_callers_line() -> None:
    # `b'x' * N` keeps the GIL; the thread lets go at the first instruction of the next function
    # it calls, where the sampler finds it on that function's `def` line (3.13: a pool worker's
    # array charged to multiprocessing's `queue.put`)
    source = "def callee(x):\n    return x\n\ndef run():\n    block = b'x' * N\n    callee(block)\n"
    keys, position = _seen_in(source, "call")
    assert keys[:2] == [("/proj/app.py", 1, "callee"), ("/proj/app.py", 6, "run")]
    outer = keys[2:]
    stalled_keys(keys, position)  # type: ignore[arg-type]
    if sys.version_info >= (3, 11):
        assert keys == [("/proj/app.py", 5, "run"), *outer]
    else:  # no check at a function's start before 3.11: the callee's own bytecode is all there is
        assert keys[0][2] == "callee" and keys[1:] == [("/proj/app.py", 6, "run"), *outer]


def test_a_one_line_function_found_on_its_def_line_after_its_start_keeps_its_stall() -> None:
    source = "def callee(x): return x * N\n\ndef run():\n    y = 1\n    callee(y)\n"
    keys, position = _seen_in(source, "return")
    before = list(keys)
    stalled_keys(keys, position)  # type: ignore[arg-type]
    assert keys == before and keys[0] == ("/proj/app.py", 1, "callee")


def test_short_paths() -> None:
    cwd = "/home/u/proj"
    assert short_path("/home/u/proj/src/a.py", cwd) == "src/a.py"
    assert (
        short_path("/x/lib/python3.11/site-packages/numpy/_core/numeric.py", cwd) == "numpy/_core/numeric.py"
    )
    assert short_path(os.path.join(sys.base_prefix, "lib", "python3.11", "json", "__init__.py"), cwd) == (
        "<stdlib>/json/__init__.py"
    )
    assert short_path("<startup>", cwd) == "<startup>"
    # a project of the user's under lib/python/ is not the standard library
    assert short_path("/srv/proj/lib/python/app/main.py", "/srv") == "proj/lib/python/app/main.py"
    assert not _is_library_path("/srv/proj/lib/python/app/main.py")
    assert _is_library_path("/usr/lib/python3.13/os.py")


class _Dropped:
    pass


def test_sampler_holds_no_frame_while_it_reads_proc(tmp_path: Path) -> None:
    # Reading /proc lets go of the GIL. A frame the sampler still held then would keep the locals of
    # a function that returns meanwhile alive: memgauge would keep memory the program dropped.
    go = threading.Event()

    def hold(obj: _Dropped) -> None:
        go.wait()

    obj = _Dropped()
    ref = weakref.ref(obj)
    worker = threading.Thread(target=hold, args=(obj,))
    worker.start()
    del obj
    seen_alive: list[bool] = []
    armed = False

    class Probe(Sampler):
        def resident(self) -> int:
            if armed and not go.is_set():
                go.set()
                worker.join()  # hold() returned while the sampler was reading
                seen_alive.append(ref() is not None)
            return super().resident()

    sampler = Probe(str(tmp_path))
    sampler.own_ident = threading.get_ident()  # as in its own thread: its own frame is left out
    armed = True
    sampler.sample()
    worker.join()
    assert seen_alive == [False]


def test_a_malformed_lines_file_loses_that_process_only_and_says_so(tmp_path: Path) -> None:
    from memgauge.capture import WIRE_VERSION
    from memgauge.capture._lines_read import read_lines
    from memgauge.model import CaptureWarning

    s = _sampler(tmp_path)
    s.lines[("f.py", 3, "f")] = [0.5, 0.0, 0.1, 0.0, 6.0]
    s.flush()
    good = json.loads((tmp_path / f"lines.{os.getpid()}.json").read_text())
    assert good["v"] == WIRE_VERSION
    (tmp_path / "lines.999999.json").write_text('{"pid": 999999, "keys": [["x.py"]]}')
    (tmp_path / "lines.999998.json").write_text("[1, 2")
    (tmp_path / "lines.999997.json").write_text(json.dumps({**good, "pid": 999997, "v": WIRE_VERSION + 1}))
    (tmp_path / "lines.999996.json").write_text(json.dumps({**good, "pid": 999996, "lines": [[0, 1.0]]}))
    (tmp_path / "lines.999995.json.tmp").write_text("[")  # a write in progress: not a lines file
    warnings: list[CaptureWarning] = []
    data = read_lines(str(tmp_path), 0.0, warnings=warnings)
    assert [(x.pid, x.file, x.line) for x in data.lines] == [(os.getpid(), "f.py", 3)]
    why = {w.file: w.message for w in warnings}
    assert sorted(why) == [f"lines.99999{n}.json" for n in (6, 7, 8, 9)]
    assert why["lines.999999.json"].startswith("no field 't_end'")
    assert why["lines.999998.json"].startswith("not JSON")
    assert why["lines.999997.json"].startswith(
        f"wire format version {WIRE_VERSION + 1}, and this memgauge reads version"
    )
    assert "ValueError" in why["lines.999996.json"]  # a row of two columns, not six
    assert all(m.endswith("the line samples of this process are missing") for m in why.values())


def test_lines_of_processes_left_out_on_purpose_are_no_warning(tmp_path: Path) -> None:
    from memgauge.capture._lines_read import read_lines
    from memgauge.model import CaptureWarning

    _sampler(tmp_path).flush()
    warnings: list[CaptureWarning] = []
    assert read_lines(str(tmp_path), 0.0, {os.getpid() + 1}, warnings=warnings).lines == []
    assert warnings == []


def test_the_reader_returns_the_raw_series_and_finds_no_leak_itself(tmp_path: Path) -> None:
    from memgauge.capture._lines_read import read_lines

    s = _sampler(tmp_path)
    a, b = ("f.py", 1, "outer"), ("f.py", 2, "inner")
    for i in range(40):
        s.ledger.credit(s.ledger.stack_id((a, b)), 2 * MIB, 1.0 + i / 10)
    s.flush()
    data = read_lines(str(tmp_path), 0.0)
    (part,) = data.retained
    assert part.pid == os.getpid() and {a, b} <= set(part.series)
    assert part.series[b][-1] == (4.9, 80 * MIB)
    assert [a, b] in part.stacks
    assert not hasattr(data, "leaks")  # analysis, done by the runner's assembly


def test_the_samplers_own_cpu_time_is_charged_to_no_line(tmp_path: Path) -> None:
    import time

    from memgauge.capture._sampling import start_sampler
    from memgauge.capture._wire import CPU_NATIVE, CPU_PYTHON

    def charged() -> float:
        return sum(stats[CPU_NATIVE] + stats[CPU_PYTHON] for stats in list(sampler.lines.values()))

    sampler = start_sampler(str(tmp_path))
    assert sampler is not None
    try:
        # past the first samples (the first charges up to an interval of this thread's earlier CPU)
        time.sleep(0.1)
        before, own_before = charged(), time.clock_gettime(sampler.own_clock)
        time.sleep(0.6)  # this thread uses no CPU; the sampler's own thread samples ~60 times
        after, own = charged(), time.clock_gettime(sampler.own_clock) - own_before
    finally:
        sampler.stop()
    # its own CPU clock is read by a (negative) clock id: once it was never taken off, and went
    # to the lines running native code, or to "<native>" (all of it here: charged ~ own)
    assert own > 0 and after - before < 0.25 * own, (after - before, own)


def _burn(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_the_stretch_before_the_programs_return_goes_to_the_line_last_seen(tmp_path: Path) -> None:
    # the main thread's CPU from its last sample to the program's return: no later sample sees its
    # line (the exit handlers run memgauge's frames), and it was lost (0.7 s of a 1.5 s loop under
    # a 100 ms switch interval); here the next sample sees another line of this test, which is
    # where it went before
    s = Sampler(str(tmp_path))
    s.sample()
    seen = next(k for k in s.lines if k[0] == __file__)
    _burn(0.3)
    s.program_returned()
    s.sample()
    cpu = s.lines[seen][CPU_PYTHON] + s.lines[seen][CPU_NATIVE]
    assert cpu >= 0.27, {k: v[:2] for k, v in s.lines.items()}
    s.close()


def test_the_bootstraps_library_frames_before_the_program_are_start_up(tmp_path: Path) -> None:
    # runpy reading memgauge's bootstrap before any frame of memgauge's is on the stack: its growth
    # went to importlib's get_data, with runpy's frames, in 2 runs of 10 with --lib
    runpy_keys = [("<frozen importlib._bootstrap_external>", 1130, "get_data"), ("<frozen runpy>", 159, "f")]
    s = _sampler(tmp_path)
    assert s._outside_program(runpy_keys, None) == (runpy_keys, None)  # not the bootstrap: kept
    s.bootstrap = True
    assert s._outside_program(runpy_keys, None) == ([], None)  # not seen: start-up
    user = [("/work/main.py", 3, "<module>")]
    assert s._outside_program(user, None) == (user, None)
    s.program_key = ("/work/main.py", 0, "<module>")  # the program started: its library frames count
    assert s._outside_program(runpy_keys, None) == (runpy_keys, None)
    s.close()
