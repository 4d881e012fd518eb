"""Per-phase GPU windows: ``memgauge.phase`` boundaries read and reset torch's allocator peaks
through the torch tracker's ``GpuLog`` (a scripted ``torch.cuda``), folded into every open window as
phases fold ``VmHWM``, so nested phases and a step's reset inside a phase keep exact figures; and
``phase.gpu=`` budgets judged on them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memgauge.capture._phases import PhaseTracker
from memgauge.gate import judge, parse_budget
from memgauge.sections.gpu import GpuDevice, GpuLog, GpuWindow, ScriptedCudaSource, gpu_phase_figure
from memgauge.sections.gpu._capture_plug import follow_phases
from memgauge.sections.torch._capture import set_torch_tracker
from memgauge.sections.torch._capture_track import Tracker
from tests.factories import make_profile

MIB = 1 << 20


class Memory:
    """A process whose resident figures never move (the GPU side is what is under test)."""

    def resident(self) -> int:
        return 0

    def high_water(self) -> int:
        return 0

    def reset_high_water(self) -> bool:
        return True


class Quiet:
    def phase_started(self, phase: object, high_water_before: int) -> None:
        pass

    def phase_ended(self, closed: object) -> None:
        pass

    def high_water_reset(self, high_water_before: int) -> None:
        pass


def frame(allocated: int, reserved: int) -> dict[str, int]:
    return {
        "allocated_bytes.all.peak": allocated,
        "allocated_bytes.all.current": allocated // 4,
        "reserved_bytes.all.peak": reserved,
        "reserved_bytes.all.current": reserved,
        "active_bytes.all.peak": allocated,
    }


def tracked(frames: list[dict[str, int]], initialized: bool = True) -> Iterator[Tracker]:
    tracker = Tracker("summary")
    script = {"initialized": initialized, "devices": [{"uuid": "u0", "frames": frames}]}
    tracker.gpu = GpuLog(ScriptedCudaSource(script))
    follow_phases()  # as the GPU section does where it plugs into the tracker
    set_torch_tracker(tracker)
    try:
        yield tracker
    finally:
        set_torch_tracker(None)


@pytest.fixture
def tracker() -> Iterator[Tracker]:
    # frame N until the Nth reset: before "fit", fit before "epoch", the epoch's step, the epoch
    # after its step, fit after the epoch, the end
    frames = [(50, 60), (800, 820), (700, 720), (400, 720), (100, 720), (20, 720)]
    yield from tracked([frame(a * MIB, r * MIB) for a, r in frames])


def test_nested_phases_and_a_step_inside_keep_exact_windows(tracker: Tracker) -> None:
    phases = PhaseTracker(Memory(), Quiet())  # type: ignore[arg-type]
    fit = phases.start("fit")
    epoch = phases.start("epoch")
    tracker.end_step("explicit")  # resets the peaks inside both phases
    phases.end(epoch)
    phases.end(fit)
    record = tracker.gpu.record()
    assert record is not None
    got = [
        (w["kind"], w["name"], w["allocated_peak"] // MIB, w["reserved_peak"] // MIB)
        for w in record["windows"]
    ]
    # the step ran from the tracker's start: it saw every reading up to its end (50, 800, 700)
    assert got == [("step", "0", 800, 820), ("phase", "epoch", 700, 720), ("phase", "fit", 800, 820)]
    assert [w["allocated_end"] // MIB for w in record["windows"]] == [175, 100, 25]
    assert (record["devices"][0]["allocated_peak"], record["devices"][0]["reserved_peak"]) == (
        800 * MIB,
        820 * MIB,
    )
    # five resets: two phase starts, the step's end, two phase ends
    assert tracker.gpu.source.resets == [5]  # type: ignore[attr-defined]


def test_a_phase_before_cuda_runs_has_no_window() -> None:
    for tracker in tracked([frame(10 * MIB, 20 * MIB)], initialized=False):
        phases = PhaseTracker(Memory(), Quiet())  # type: ignore[arg-type]
        phases.end(phases.start("load"))
        assert tracker.gpu.windows == []
        assert tracker.gpu.record() is None


def test_without_a_torch_tracker_phases_touch_nothing() -> None:
    set_torch_tracker(None)
    phases = PhaseTracker(Memory(), Quiet())  # type: ignore[arg-type]
    closed = phases.end(phases.start("load"))
    assert closed.phase.name == "load"


def window(name: str, reserved: int, pid: int = 1) -> GpuWindow:
    return GpuWindow("phase", name, reserved // 2, reserved, reserved // 2, 0, reserved, pid=pid)


def on_gpu(*windows: GpuWindow, context: int | None = 600 * MIB) -> object:
    device = GpuDevice(index=0, name="H100", reserved_peak=900 * MIB, context=context, windows=list(windows))
    return make_profile(gpu=[device])


def test_a_phase_figure_is_the_largest_record_per_process_added_over_processes() -> None:
    profile = on_gpu(
        window("fit", 300 * MIB),
        window("fit", 500 * MIB),
        window("fit", 200 * MIB, pid=2),
        window("eval", 900 * MIB),
    )
    figure, note = gpu_phase_figure(profile, "fit")  # type: ignore[arg-type]
    assert figure == 700 * MIB
    assert note == (
        "torch reserved in 'fit' on device 0 (H100): a lower bound, the CUDA context comes on top "
        "(the run's context: 600 MiB)"
    )


@pytest.mark.parametrize(("limit", "status"), [("fit.gpu=499MiB", "fail"), ("fit.gpu=500MiB", "pass")])
def test_a_phase_gpu_limit_is_judged_on_the_phase_window(limit: str, status: str) -> None:
    (result,) = judge(on_gpu(window("fit", 500 * MIB)), parse_budget(limit)).results  # type: ignore[arg-type]
    assert (result.measured, result.status) == (500 * MIB, status)


def test_a_phase_without_a_window_is_unmeasured() -> None:
    (result,) = judge(on_gpu(window("fit", 500 * MIB)), parse_budget("eval.gpu=1GiB")).results  # type: ignore[arg-type]
    assert (result.measured, result.status) == (None, "unmeasured")
    assert result.note == "no GPU window of phase 'eval' (it did not run, or CUDA was not initialised in it)"
