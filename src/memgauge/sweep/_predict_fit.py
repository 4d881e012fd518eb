"""Predicting a training step's memory without the hardware (``memgauge fit --predict-gpu``): the
program's first two training steps under fake tensors in a fresh process
(``sections/torch/_capture_predict``: no data, no device, no tensor memory), at two batch sizes;
the tensor peak's straight line through them gives the largest batch predicted to fit a GPU of a
given size, after the named overheads below.

What it counts, and the overheads added for a GPU: ``analysis.gpu_prediction``.
"""

from __future__ import annotations

import json
import os
import tempfile

from memgauge._env import ENV_KNOBS, ENV_PREDICT
from memgauge._errors import UsageError
from memgauge.analysis import GpuPrediction, PredictedStep, gpu_prediction
from memgauge.capture import knobs_request
from memgauge.runner import RunOptions, Target, run_program


def predict_step(target: Target, parameter: str, batch: int, cwd: str | None = None) -> PredictedStep:
    """Run the program's first two steps under fake tensors at ``batch`` (the parameter set as an
    environment variable and as a module constant) and read what the tracker counted."""
    env = dict(os.environ)
    env.pop(ENV_KNOBS, None)
    env[parameter] = str(batch)
    env.update(knobs_request({parameter: batch}, [], []))
    with tempfile.TemporaryDirectory(prefix="memgauge-predict-") as scratch:
        path = os.path.join(scratch, "predicted.json")
        env[ENV_PREDICT] = path
        profile = run_program(target, RunOptions(lines="off", env=env, cwd=cwd))
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            code = profile.exit.code
            return PredictedStep(
                batch,
                error=f"no prediction: the program exited with {code} before its second optimizer step "
                "(it may need real data, or read a fake tensor's value)",
            )
    if not data.get("ok"):
        return PredictedStep(batch, error="no prediction: torch could not be tracked")
    return PredictedStep(
        batch,
        peak_bytes=int(data["peak_bytes"]),
        peak_by_role={str(k): int(v) for k, v in data["peak_by_role"].items()},
        max_by_role={str(k): int(v) for k, v in data["max_by_role"].items()},
        rounding_bytes=int(data["end_rounding_bytes"]),
        storages=int(data["end_storages"]),
    )


def predict_gpu(
    target: Target, parameter: str, batch: int, gpu_bytes: int, cwd: str | None = None
) -> GpuPrediction:
    """The prediction at ``batch`` and at half of it, and the largest batch predicted to fit a GPU
    of ``gpu_bytes`` after the named overheads."""
    if batch < 2:
        raise UsageError("the prediction needs a batch of 2 or more (it also runs at half of it)")
    steps = [predict_step(target, parameter, batch, cwd), predict_step(target, parameter, batch // 2, cwd)]
    return gpu_prediction(steps, gpu_bytes)
