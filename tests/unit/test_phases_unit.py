"""PhaseTracker logic with an injected memory source and clock: exact answers, no kernel."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import pytest

from memgauge.capture._phases import ClosedPhase, OpenPhase, PhaseTracker


@dataclass
class FakeMemory:
    """A process whose resident size the test sets; VmHWM behaves as the kernel's does."""

    rss: int = 100
    hwm: int = 100
    can_reset: bool = True
    resets: int = 0

    def set(self, rss: int) -> None:
        self.rss = rss
        self.hwm = max(self.hwm, rss)

    def resident(self) -> int:
        return self.rss

    def high_water(self) -> int:
        return self.hwm

    def reset_high_water(self) -> bool:
        if self.can_reset:
            self.hwm = self.rss
            self.resets += 1
        return self.can_reset


@dataclass
class Sink:
    started: list[tuple[str, int]] = field(default_factory=list)
    closed: list[ClosedPhase] = field(default_factory=list)

    def phase_started(self, phase: OpenPhase, high_water_before: int) -> None:
        self.started.append((phase.name, high_water_before))

    def phase_ended(self, closed: ClosedPhase) -> None:
        self.closed.append(closed)

    def high_water_reset(self, high_water_before: int) -> None:
        self.started.append(("<reset>", high_water_before))


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        self.t += 1.0
        return self.t


def make(can_reset: bool = True) -> tuple[FakeMemory, Sink, PhaseTracker]:
    mem, sink = FakeMemory(can_reset=can_reset), Sink()
    return mem, sink, PhaseTracker(mem, sink, Clock())


def peaks(sink: Sink) -> dict[str, tuple[int, bool]]:
    return {c.phase.name: (c.peak, c.exact) for c in sink.closed}


def test_sequential_phases_get_their_own_peaks() -> None:
    mem, sink, tr = make()
    mem.set(1000)  # before any phase: must not leak into the phases
    mem.set(100)
    a = tr.start("a")
    mem.set(500)
    mem.set(200)
    tr.end(a)
    b = tr.start("b")
    mem.set(300)
    tr.end(b)
    assert peaks(sink) == {"a": (500, True), "b": (300, True)}
    # the process peak from before the first reset is not lost
    assert tr.high_water_seen() == 1000


def test_nested_phases_fold_inner_peaks_into_outer() -> None:
    mem, sink, tr = make()
    outer = tr.start("outer")
    mem.set(700)  # outer's peak is before inner starts: inner's reset must not erase it
    mem.set(200)
    inner = tr.start("inner")
    mem.set(400)
    tr.end(inner)
    mem.set(250)
    tr.end(outer)
    assert peaks(sink) == {"inner": (400, True), "outer": (700, True)}
    assert sink.closed[0].phase.parent == outer.id and sink.closed[0].phase.depth == 1


def test_inner_peak_is_outer_peak_when_higher() -> None:
    mem, sink, tr = make()
    outer = tr.start("outer")
    inner = tr.start("inner")
    mem.set(900)
    mem.set(100)
    tr.end(inner)
    tr.end(outer)
    assert peaks(sink) == {"inner": (900, True), "outer": (900, True)}


def test_concurrent_phases_in_two_threads_stay_exact() -> None:
    mem, sink, tr = make()
    a = tr.start("a")
    mem.set(800)
    mem.set(150)
    result: list[OpenPhase] = []
    t = threading.Thread(target=lambda: result.append(tr.start("b")))
    t.start()
    t.join()
    mem.set(300)
    tr.end(result[0])
    tr.end(a)
    assert peaks(sink) == {"a": (800, True), "b": (300, True)}
    assert result[0].depth == 0  # another thread: not nested in a


def test_without_reset_peak_is_exact_only_if_high_water_grew() -> None:
    mem, sink, tr = make(can_reset=False)
    mem.set(1000)
    mem.set(100)
    a = tr.start("a")
    mem.set(400)  # below the old high-water mark: VmHWM cannot tell the phase's peak
    tr.end(a)
    b = tr.start("b")
    mem.set(1200)  # above it: VmHWM now is this phase's peak
    tr.end(b)
    (pa, ea), (pb, eb) = peaks(sink)["a"], peaks(sink)["b"]
    assert not ea and pa == 400  # lower bound: resident at the end
    assert eb and pb == 1200


def test_events_report_high_water_before_each_reset() -> None:
    mem, sink, tr = make()
    mem.set(600)
    mem.set(100)
    tr.end(tr.start("a"))
    assert sink.started == [("a", 600)]
    assert mem.resets == 1


@pytest.mark.parametrize("n", [1, 5])
def test_decorator_and_context_manager_share_the_active_tracker(n: int) -> None:
    import memgauge
    from memgauge.capture import _phases

    mem, sink, tr = make()
    previous = _phases.set_tracker(tr)
    try:

        @memgauge.phase
        def work(k: int) -> int:
            mem.set(100 + k)
            return k

        with memgauge.phase("block"):
            for k in range(n):
                work(k)
    finally:
        _phases.set_tracker(previous)
    names = [c.phase.name for c in sink.closed]
    assert names.count("test_decorator_and_context_manager_share_the_active_tracker.<locals>.work") == n
    assert names[-1] == "block"
    # after the tracker is gone, phases are no-ops again
    with memgauge.phase("after"):
        pass
    assert len(sink.closed) == n + 1


def test_a_nested_tracker_reports_its_resets_upstream() -> None:
    # memgauge.profile() inside a measured run: its phases reset VmHWM, the outer tracker's open
    # phase and process peak must keep what those resets erase
    mem, outer_sink = FakeMemory(), Sink()
    outer = PhaseTracker(mem, outer_sink, Clock())
    inner_sink = Sink()
    inner = PhaseTracker(mem, inner_sink, Clock(), upstream=outer)
    o = outer.start("outer")
    mem.set(900)  # outer's peak, before the inner tracker's phase resets VmHWM
    mem.set(100)
    i = inner.start("inner")
    mem.set(300)
    inner.end(i)
    outer.end(o)
    assert peaks(outer_sink) == {"outer": (900, True)}
    assert peaks(inner_sink) == {"inner": (300, True)}
    assert ("<reset>", 900) in outer_sink.started
    assert outer.high_water_seen() == 900


def _with_tracker(tracker: PhaseTracker) -> PhaseTracker | None:
    from memgauge.capture import _phases

    return _phases.set_tracker(tracker)


def test_one_phase_object_shared_by_threads_closes_each_threads_own_phase() -> None:
    import memgauge
    from memgauge.capture import _phases

    mem, sink, tr = make()
    previous = _with_tracker(tr)
    shared = memgauge.phase("work")
    a_inside, b_done = threading.Event(), threading.Event()

    def a() -> None:
        with shared:
            a_inside.set()
            b_done.wait(5)  # A's phase stays open while B enters and leaves the same object

    def b() -> None:
        a_inside.wait(5)
        with shared:
            mem.set(500)
        b_done.set()

    try:
        ta, tb = threading.Thread(target=a, name="A"), threading.Thread(target=b, name="B")
        ta.start()
        tb.start()
        ta.join()
        tb.join()
    finally:
        _phases.set_tracker(previous)
    closed = {c.phase.thread: c for c in sink.closed}
    assert set(closed) == {"A", "B"}
    assert sink.closed[0].phase.thread == "B"  # B's phase ends first, and it is B's
    assert closed["A"].end > closed["B"].end


def test_async_and_generator_functions_are_measured_while_they_run() -> None:
    import asyncio

    import memgauge
    from memgauge.capture import _phases

    mem, sink, tr = make()
    previous = _with_tracker(tr)
    try:

        @memgauge.phase("coro")
        async def coro() -> int:
            await asyncio.sleep(0)
            mem.set(700)
            return 7

        @memgauge.phase("gen")
        def gen() -> object:
            yield 1
            mem.set(400)
            yield 2

        assert asyncio.run(coro()) == 7
        mem.set(100)
        assert list(gen()) == [1, 2]  # type: ignore[call-overload]
    finally:
        _phases.set_tracker(previous)
    assert peaks(sink) == {"coro": (700, True), "gen": (400, True)}
