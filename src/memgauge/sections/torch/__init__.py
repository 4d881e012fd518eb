"""The torch section: tensors by role, module and step, torch's out-of-memory errors, and the hook
points other sections plug into (``_capture_points.HookPoints``).

Its parts, by layer: ``_capture*`` runs in the measured process once the program imports torch
(standard library and the program's own torch only); ``_read`` reads what it wrote; ``_record`` is
its part of the profile (``Profile.torch``); ``_analysis`` its pure functions; ``_report*`` its
report blocks; ``_inprocess`` its part of ``memgauge.profile``. Lazy: importing this face loads
nothing until a name is used."""

from __future__ import annotations

from memgauge import _lazy

# not `from typing import TYPE_CHECKING`: importing typing costs the measured process ~8 ms
TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.sections.torch._analysis import (
        StepLeak,
        TensorDiff,
        diff_tensors,
        torch_step_leak,
        torch_steps,
        torch_summary,
    )
    from memgauge.sections.torch._capture import (
        TORCH_MODES,
        active_torch_tracker,
        live_tensors,
        start_tracking,
        stop_tracking,
    )
    from memgauge.sections.torch._capture_compat import hidden, model_of, quiet_compile_warning
    from memgauge.sections.torch._capture_track import ROLES, Tracker
    from memgauge.sections.torch._inprocess import BlockTorch
    from memgauge.sections.torch._read import read_torch, torch_memory
    from memgauge.sections.torch._record import (
        TORCH_ROLES,
        TorchMemory,
        TorchModule,
        TorchOom,
        TorchStep,
        TorchTensor,
    )
    from memgauge.sections.torch._report import torch_section

_NAMES = {
    "BlockTorch": "_inprocess",
    "ROLES": "_capture_track",
    "Tracker": "_capture_track",
    "hidden": "_capture_compat",
    "model_of": "_capture_compat",
    "quiet_compile_warning": "_capture_compat",
    "torch_section": "_report",
    "active_torch_tracker": "_capture",
    "diff_tensors": "_analysis",
    "live_tensors": "_capture",
    "read_torch": "_read",
    "start_tracking": "_capture",
    "StepLeak": "_analysis",
    "stop_tracking": "_capture",
    "TensorDiff": "_analysis",
    "torch_memory": "_read",
    "TORCH_MODES": "_capture",
    "TORCH_ROLES": "_record",
    "torch_step_leak": "_analysis",
    "torch_steps": "_analysis",
    "torch_summary": "_analysis",
    "TorchMemory": "_record",
    "TorchModule": "_record",
    "TorchOom": "_record",
    "TorchStep": "_record",
    "TorchTensor": "_record",
}

__all__ = [
    "ROLES",
    "TORCH_MODES",
    "TORCH_ROLES",
    "BlockTorch",
    "StepLeak",
    "TensorDiff",
    "TorchMemory",
    "TorchModule",
    "TorchOom",
    "TorchStep",
    "TorchTensor",
    "Tracker",
    "active_torch_tracker",
    "diff_tensors",
    "hidden",
    "live_tensors",
    "model_of",
    "quiet_compile_warning",
    "read_torch",
    "start_tracking",
    "stop_tracking",
    "torch_memory",
    "torch_section",
    "torch_step_leak",
    "torch_steps",
    "torch_summary",
]

__getattr__, __dir__ = _lazy.attach(__name__, _NAMES)
