"""Reading the ``gpu`` objects of the torch trackers' records (``torch.<pid>.json``) per process.

Runs in the runner, after the program. ``read_torch`` reads the rest of those records; this reader
takes only their ``gpu`` part, for every process (the GPU layers are summed over processes, where
``read_torch`` keeps the largest). An object that breaks the layout (``_capture_log.GPU_FIELDS``) is left
out with a warning naming its file.
"""

from __future__ import annotations

import json
import os
from typing import Any

from memgauge.capture import TORCH, layout_problem, open_record, pid_of, problem
from memgauge.model import CaptureWarning
from memgauge.sections.gpu._capture_log import GPU_DEVICE_FIELDS, GPU_FIELDS, GPU_WINDOW_FIELDS


def _check(gpu: object) -> str | None:
    found = layout_problem(gpu, GPU_FIELDS)
    if found is not None or not isinstance(gpu, dict):
        return found
    for device in gpu["devices"]:
        found = layout_problem(device, GPU_DEVICE_FIELDS)
        if found is not None:
            return f"a device: {found}"
    for window in gpu["windows"]:
        found = layout_problem(window, GPU_WINDOW_FIELDS)
        if found is not None:
            return f"a window: {found}"
    cap = gpu.get("cap_bytes")
    if cap is not None and layout_problem({"cap_bytes": cap}, {"cap_bytes": "int"}) is not None:
        return "field 'cap_bytes' is not of type int"
    if not isinstance(gpu.get("snapshot", ""), str):
        return "field 'snapshot' is not of type str"
    if not all(isinstance(v, int) and k.isdigit() for k, v in gpu["tensors"].items()):
        return "field 'tensors' is not a map of device index to bytes"
    return None


def read_gpu_records(
    directory: str | os.PathLike[str], *, warnings: list[CaptureWarning] | None = None
) -> dict[int, dict[str, Any]]:
    """pid -> the ``gpu`` object of that process's torch record (processes without one left out)."""
    found: dict[int, dict[str, Any]] = {}
    for name in sorted(os.listdir(directory)):
        pid = pid_of(name, TORCH)
        if pid is None:
            continue
        try:
            with open_record(os.path.join(directory, name)) as f:
                record = json.load(f)
        except (OSError, ValueError):
            continue  # read_torch has said so already
        if problem(record, {}) is not None or "gpu" not in record:
            continue
        trouble = _check(record["gpu"])
        if trouble is not None:
            if warnings is not None:
                message = f"gpu: {trouble}: its GPU figures are missing"
                warnings.append(CaptureWarning(file=name, message=message))
            continue
        found[pid] = record["gpu"]
    return found


def read_gpu_snapshot(path: str) -> dict[str, Any] | str:
    """The memory snapshot a process dumped (``_capture_snapshot``), or why it cannot be read."""
    import pickle  # here: a run without a snapshot (most runs) does not import it (~3 ms)

    class _PlainUnpickler(pickle.Unpickler):
        """Loads plain data only (dicts, lists, strings, numbers, tuples): a snapshot is nothing
        else, and the file was written by the measured program, which need not be trusted."""

        def find_class(self, module: str, name: str) -> Any:
            raise pickle.UnpicklingError(f"{module}.{name}: not plain data")

    try:
        with open_record(path, binary=True) as f:
            found = _PlainUnpickler(f).load()
    except FileNotFoundError:
        return "not written (CUDA never initialised, or the process did not exit normally)"
    except (OSError, pickle.UnpicklingError, EOFError, ValueError) as e:
        return f"unreadable ({e})"
    if not isinstance(found, dict) or not isinstance(found.get("device_traces"), list):
        return "not a torch memory snapshot (no device_traces)"
    return found
