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
