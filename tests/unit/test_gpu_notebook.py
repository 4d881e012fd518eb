"""A notebook cell's GPU peak where a torch tracker runs in the kernel: the cell is a window of the
tracker's ``GpuLog`` (its ``CudaSource``, scripted here), so the tracker's step windows stay exact
across the cell and the cell's peak spans a step's reset inside it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memgauge.notebook import measure
from memgauge.sections.gpu import GpuLog, GpuPeak, ScriptedCudaSource, TorchCudaMonitor
from memgauge.sections.torch._capture import set_torch_tracker
from memgauge.sections.torch._capture_track import Tracker

pytest.importorskip("torch")  # the monitor looks for a tracker only where torch is loaded
MIB = 1 << 20


def frame(allocated: int, reserved: int, current: int) -> dict[str, int]:
    return {
        "allocated_bytes.all.peak": allocated * MIB,
        "reserved_bytes.all.peak": reserved * MIB,
        "allocated_bytes.all.current": current * MIB,
    }


@pytest.fixture
def tracker() -> Iterator[Tracker]:
    # frame N until the Nth reset: before the cell, the cell up to its step, the cell after it
    frames = [frame(900, 920, 100), frame(400, 420, 100), frame(200, 420, 50)]
    t = Tracker("summary")
    t.gpu = GpuLog(ScriptedCudaSource({"devices": [{"uuid": "u0", "frames": frames}]}))
    set_torch_tracker(t)
    try:
        yield t
    finally:
        set_torch_tracker(None)


def test_a_cell_is_a_window_of_the_trackers_log(tracker: Tracker) -> None:
    m = measure(lambda: tracker.end_step("explicit"), gpu=TorchCudaMonitor())
    assert m.gpu == GpuPeak(
        peak_allocated_bytes=(400 * MIB,),
        start_allocated_bytes=(100 * MIB,),
        peak_reserved_bytes=(420 * MIB,),
        method="torch.cuda.memory_stats through the torch tracker's log, a window per block",
    )
    # the step began before the cell: its window keeps the 900 MiB the cell's reset would have hidden
    (step,) = tracker.gpu.windows
    assert (step["kind"], step["allocated_peak"]) == ("step", 900 * MIB)
    # the cell's window, the memgauge.profile() block's inside it (the same log), the step
    assert tracker.gpu.source.resets == [5]  # type: ignore[attr-defined]
