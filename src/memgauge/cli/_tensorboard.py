"""``memgauge run --tensorboard DIR``: the run's figures as TensorBoard scalars, written with the
real ``tensorboard`` package (the ``tensorboard`` extra; imported only when asked for), so that
users see memgauge's figures beside their own.

Per step (TensorBoard's step = the step's index): ``memgauge/step_seconds``,
``memgauge/steps_per_second`` (one over the step's time), ``memgauge/data_wait_share``,
``memgauge/samples_per_second`` where the step's samples are known, ``memgauge/tokens_per_second``
where its tokens are, and ``memgauge/torch_peak_bytes`` where torch was tracked. At the last step,
the run's steady figures: ``memgauge/steady/steps_per_second``, ``.../samples_per_second``,
``.../tokens_per_second``, ``.../data_wait_share``, ``.../mfu``, ``.../flops_per_step``, the
steady CPU (``.../cpu_main_loop``, ``.../cpu_workers``, in cores) and GPU (``.../gpu_utilization``,
``.../gpu_memory_utilization``) where measured, and ``memgauge/peak_resident_bytes``.
"""

from __future__ import annotations

import os
import time

from memgauge._errors import OutputError, UsageError
from memgauge.model import Profile


def check_tensorboard(directory: str) -> None:
    """Fail before the run when the package is missing or the directory cannot be made."""
    import importlib.util

    if importlib.util.find_spec("tensorboard") is None:
        raise UsageError("--tensorboard needs tensorboard: pip install 'memgauge[tensorboard]'")
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise UsageError(f"--tensorboard {directory}: not a directory")


def scalars(profile: Profile) -> list[tuple[str, int, float]]:
    """(tag, step, value) of every scalar the run gives, in step order."""
    out: list[tuple[str, int, float]] = []
    t = profile.training
    torch_steps = {s.index: s for s in profile.torch.steps} if profile.torch is not None else {}
    last = 0
    for r in t.rows if t is not None else []:
        last = r.index
        if r.seconds:
            out.append(("memgauge/step_seconds", r.index, r.seconds))
            out.append(("memgauge/steps_per_second", r.index, 1 / r.seconds))
            out.append(("memgauge/data_wait_share", r.index, min(1.0, r.wait_seconds / r.seconds)))
            if r.samples is not None:
                out.append(("memgauge/samples_per_second", r.index, r.samples / r.seconds))
            if r.tokens is not None:
                out.append(("memgauge/tokens_per_second", r.index, r.tokens / r.seconds))
        step = torch_steps.get(r.index)
        if step is not None:
            out.append(("memgauge/torch_peak_bytes", r.index, float(step.peak_bytes)))
    if t is not None:
        steady = {
            "steps_per_second": t.steps_per_second,
            "samples_per_second": t.samples_per_second,
            "tokens_per_second": t.tokens_per_second,
            "cpu_main_loop": t.cpu_main_loop,
            "cpu_workers": t.cpu_workers,
            "gpu_utilization": t.gpu_utilization,
            "gpu_memory_utilization": t.gpu_memory_utilization,
            "data_wait_share": t.data_wait_share,
            "mfu": t.mfu,
            "flops_per_step": t.flops_per_step,
        }
        out += [(f"memgauge/steady/{k}", last, float(v)) for k, v in steady.items() if v is not None]
    out.append(("memgauge/peak_resident_bytes", last, float(profile.peak.resident_bytes)))
    return out


def write_tensorboard(profile: Profile, directory: str) -> None:
    from tensorboard.compat.proto.event_pb2 import Event  # type: ignore[import-untyped]
    from tensorboard.compat.proto.summary_pb2 import Summary  # type: ignore[import-untyped]
    from tensorboard.summary.writer.event_file_writer import EventFileWriter  # type: ignore[import-untyped]

    try:
        os.makedirs(directory, exist_ok=True)
        writer = EventFileWriter(directory, filename_suffix=".memgauge")
        now = time.time()
        for tag, step, value in scalars(profile):
            summary = Summary(value=[Summary.Value(tag=tag, simple_value=value)])
            writer.add_event(Event(wall_time=now, step=step, summary=summary))
        writer.close()
    except OSError as e:
        raise OutputError(f"--tensorboard {directory}: {e.strerror or e}") from e
