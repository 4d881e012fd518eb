"""A prediction run for ``memgauge fit --predict-gpu``: the program's first training steps under fake
tensors (``torch._subclasses.fake_tensor.FakeTensorMode``), so no tensor memory is allocated and no
device or data is needed, stopped after the second optimizer step
(the first steady one).

Started once torch is imported (the finder of ``_capture`` calls ``start_prediction_from_env``) when
``MEMGAUGE_PREDICT`` names a file: the fake mode is entered for the whole program, so the model's
parameters, the batch and every tensor after them are fake, with the real shapes and dtypes. The
torch tracker (started before) counts their storages by role exactly as in a real run; at the end
of the second optimizer step (after the tracker's own hook) its figures are written to that file and
the process ends at once (``os._exit``: nothing after the step runs).

What cannot run under fake tensors fails as it would in the program (``.item()`` of a fake tensor
before the first step, data read into a real tensor the program then mixes in); the file is then
not written and the caller says so.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from torch.optim.optimizer import register_optimizer_step_post_hook

from memgauge._env import ENV_PREDICT

if TYPE_CHECKING:
    from memgauge.sections.torch._capture_track import Tracker

# two steps: the second is the steady state (the optimizer's state exists from the first step on,
# and the forward of the second runs beside it), the first alone misses that
STEPS = 2
CUDA_ROUNDING = 512  # the caching allocator rounds every request up to 512 B (docs/gpu-facts.md)

_mode: Any = None


def start_prediction_from_env(tracker_of: Callable[[], Tracker | None]) -> bool:
    """Enter fake mode for the rest of the program when ``MEMGAUGE_PREDICT`` asks; True if so."""
    global _mode
    path = os.environ.get(ENV_PREDICT, "")
    if not path or _mode is not None:
        return False
    from torch._subclasses.fake_tensor import FakeTensorMode

    _mode = FakeTensorMode(allow_non_fake_inputs=True)
    _mode.__enter__()
    steps = [0]

    def after_step(optimizer: object, args: object, kwargs: object) -> None:
        steps[0] += 1
        if steps[0] >= STEPS:
            _finish(path, tracker_of())

    register_optimizer_step_post_hook(after_step)
    return True


def _finish(path: str, tracker: Tracker | None) -> None:
    result: dict[str, Any] = {"ok": tracker is not None}
    if tracker is not None:
        from memgauge.sections.torch._capture_track import ROLES

        live = list(tracker.entries.values())
        raw = sum(entry.nbytes for entry in live)
        rounded = sum(-(-entry.nbytes // CUDA_ROUNDING) * CUDA_ROUNDING for entry in live)
        result.update(
            peak_bytes=tracker.peak,
            peak_by_role=dict(zip(ROLES, tracker.peak_roles, strict=True)),
            max_by_role=dict(zip(ROLES, tracker.max_roles, strict=True)),
            end_bytes=raw,
            end_storages=len(live),
            end_rounding_bytes=rounded - raw,
            devices=sorted(tracker.devices),
        )
    with contextlib.suppress(OSError):
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(result, f)
        os.replace(tmp, path)
    os._exit(0)
