"""Reading the torch trackers' records (``torch.<pid>.json``, see ``_wire``) into ``TorchMemory``.

Runs in the runner, after the program. A record that does not pass the wire format is left out
with a warning naming its file; of those that pass, the process that held the most tensor bytes
gives the profile's figures (a training script's DataLoader workers import torch too, and hold
next to nothing).
"""

from __future__ import annotations

import os
from typing import Any

from memgauge.capture import (
    TORCH,
    TORCH_FIELDS,
    TORCH_OOM_FIELDS,
    TORCH_OOM_OPTIONAL,
    TORCH_OPTIONAL,
    TORCH_STEP_FIELDS,
    TORCH_STEP_OPTIONAL,
    layout_problem,
    problem,
    read_records,
)
from memgauge.model import CaptureWarning
from memgauge.sections.torch._record import (
    TORCH_ROLES,
    TorchMemory,
    TorchModule,
    TorchOom,
    TorchStep,
    TorchTensor,
)


def _check(record: Any) -> str | None:
    found = problem(record, TORCH_FIELDS, TORCH_OPTIONAL)
    if found is not None:
        return found
    for step in record["steps"]:
        found = layout_problem(step, TORCH_STEP_FIELDS, TORCH_STEP_OPTIONAL)
        if found is not None:
            return f"a step: {found}"
    if "oom" in record:
        found = layout_problem(record["oom"], TORCH_OOM_FIELDS, TORCH_OOM_OPTIONAL)
        if found is not None:
            return f"the out-of-memory record: {found}"
    return None


def _tensor(row: dict[str, Any]) -> TorchTensor:
    return TorchTensor(
        bytes=int(row.get("bytes", 0)),
        shape=[int(n) for n in row.get("shape", [])],
        dtype=str(row.get("dtype", "")),
        device=str(row.get("device", "")),
        role=str(row.get("role", "other")),
        name=str(row.get("name", "")),
        line=str(row.get("line", "")),
        module=str(row.get("module", "")),
        id=int(row.get("id", 0)),
    )


def torch_memory(record: dict[str, Any], t0: float, processes: int = 1) -> TorchMemory:
    """One checked record as the profile's ``TorchMemory``; times relative to ``t0`` (the run's
    start on the monotonic clock every process shares)."""
    steps = [
        TorchStep.from_dict(
            {
                "index": i,
                "start_seconds": round(float(s["start"]) - t0, 6),
                "seconds": round(float(s["seconds"]), 6),
                "peak_bytes": int(s["peak_bytes"]),
                "end_bytes": int(s["end_bytes"]),
                **{
                    k: round(float(s[k]), 6) if k.endswith("_seconds") else s[k]
                    for k in TORCH_STEP_OPTIONAL
                    if k in s
                },
            }
        )
        for i, s in enumerate(record["steps"])
    ]
    oom = record.get("oom")
    peak_t = record.get("peak_t")
    return TorchMemory(
        mode=str(record["mode"]),
        pid=int(record["pid"]),
        peak_bytes=int(record["peak_bytes"]),
        peak_at_seconds=None if peak_t is None else round(float(peak_t) - t0, 6),
        peak_by_role=roles(record["peak_by_role"]),
        max_by_role=roles(record["max_by_role"]),
        end_by_role=roles(record["end_by_role"]),
        modules=[TorchModule(str(r[0]), str(r[1]), int(r[2])) for r in record["modules"] if len(r) == 3],
        steps=steps,
        steps_dropped=int(record.get("steps_dropped", 0)),
        steps_untracked=int(record.get("steps_untracked", 0)),
        devices=[str(d) for d in record.get("devices", [])],
        oom=_oom(oom, t0) if oom is not None else None,
        oom_count=int(record.get("oom_count", 0)),
        processes=processes,
        notes=[str(n) for n in record.get("notes", [])],
    )


def roles(data: dict[str, Any]) -> dict[str, int]:
    return {role: int(data.get(role, 0)) for role in TORCH_ROLES}


def _oom(data: dict[str, Any], t0: float) -> TorchOom:
    requested = data.get("requested_bytes")
    return TorchOom(
        at_seconds=round(float(data["t"]) - t0, 6),
        message=str(data["message"]),
        requested_bytes=None if requested is None else int(requested),
        device=str(data.get("device", "")),
        where=str(data.get("where", "")),
        step=int(data.get("step", 0)),
        phase=str(data.get("phase", "")),
        total_bytes=int(data.get("total_bytes", 0)),
        by_role=roles(data["by_role"]),
        tensors=[_tensor(t) for t in data["tensors"] if isinstance(t, dict)],
    )


def read_torch(
    directory: str | os.PathLike[str], t0: float, *, warnings: list[CaptureWarning] | None = None
) -> TorchMemory | None:
    """The torch figures of the run, or None when no process of it tracked torch."""
    records, problems = read_records(os.fspath(directory), TORCH, _check)
    for name, why in problems:
        _warn(warnings, name, f"{why}: this process's torch figures are missing")
    if not records:
        return None
    main = max(records, key=lambda r: (int(r["peak_bytes"]), len(r["steps"])))
    return torch_memory(main, t0, processes=len(records))


def _warn(warnings: list[CaptureWarning] | None, name: str, message: str) -> None:
    if warnings is not None:
        warnings.append(CaptureWarning(file=name, message=message))
