"""Per-phase GPU windows: ``memgauge.phase`` tells the torch tracker's ``GpuLog`` where each phase
begins and ends (``_phases.PhaseTracker``), so that a phase gets a ``windows`` row of kind "phase"
with its allocator peaks per device, exact as the phases' resident peaks are (docs/gpu.md).

Nothing happens where no torch tracker runs (torch not imported, ``--torch off``) or the program
has not initialised CUDA: this module never imports torch or the tracker (one dictionary lookup per
phase boundary). Standard library only.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.sections.gpu._capture_log import GpuLog


def _log() -> GpuLog | None:
    torch_capture = sys.modules.get("memgauge.sections.torch._capture")
    if torch_capture is None:
        return None
    tracker = torch_capture.active_torch_tracker()
    return None if tracker is None else tracker.gpu


def gpu_phase_started(phase: object) -> None:
    """``phase`` (an ``OpenPhase``) began: a GPU window opens for it."""
    log = _log()
    if log is not None:
        log.window_open(phase)


def gpu_phase_ended(phase: object, name: str) -> None:
    """``phase`` ended: its GPU window goes out as a "phase" row of the log's ``windows``."""
    log = _log()
    if log is not None:
        log.window_close(phase, "phase", name)
