"""The GPU section's part of the torch tracker (the registry's "torch"): the CUDA allocator's log
per device and window, torch's reserve capped under ``--enforce``, the memory history's snapshot,
and the phases' GPU windows. Standard library only; torch is the program's, handed over."""

from __future__ import annotations

from memgauge.capture import add_phase_listener
from memgauge.sections.gpu._capture_cap import install_cap
from memgauge.sections.gpu._capture_log import GpuLog
from memgauge.sections.gpu._capture_phase import gpu_phase_ended, gpu_phase_started
from memgauge.sections.gpu._capture_snapshot import install_snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memgauge.sections.torch import Tracker


def made(tracker: Tracker) -> None:
    """The tracker's allocator log, before it counts its first tensor."""
    tracker.gpu = GpuLog()


def connected(tracker: Tracker, torch: Any, directory: str) -> None:
    """Once the tracker's hooks are in: ``--enforce`` with a ``gpu=`` limit, ``--gpu-snapshot FILE``
    (docs/gpu.md), and a GPU window for every phase."""
    log = tracker.gpu
    assert isinstance(log, GpuLog)
    log.cap = install_cap(torch)
    log.snapshot = install_snapshot(torch) or ""
    follow_phases()


def follow_phases() -> None:
    """A GPU window for every phase of this process, in the active tracker's log."""
    add_phase_listener(gpu_phase_started, gpu_phase_ended)
