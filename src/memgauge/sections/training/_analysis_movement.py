"""Data movement of a training loop: bytes copied host<->device per step and per second, and the
bytes each process sent others through multiprocessing, with their rates. Pure functions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memgauge.sections.training._analysis import TrainingFigure, stat
from memgauge.sections.training._record import Training, TrainingCopies, TrainingCopyLine, TrainingStep


def summarize_copies(rows: Sequence[TrainingStep], record: Mapping[str, Any] | None) -> TrainingCopies | None:
    """The copies across devices of a loop whose ``rows`` are marked (warm-up, the FLOP-counted
    step), from the capture's ``record`` (``{"total", "count", "steps", "lines"}``): totals over the
    run, per steady step and per second of the steady steps' time. None when nothing crossed."""
    if not record:
        return None
    total = record.get("total") or {}
    count = record.get("count") or {}
    out = TrainingCopies(
        h2d_bytes=int(total.get("h2d", 0)),
        d2h_bytes=int(total.get("d2h", 0)),
        d2d_bytes=int(total.get("d2d", 0)),
        copies=sum(int(n) for n in count.values()),
        lines=[
            TrainingCopyLine(line=str(line), direction=str(d), bytes=int(n), copies=int(c))
            for line, d, n, c in record.get("lines") or []
        ],
    )
    if out.copies == 0:
        return None
    steady = [
        r
        for r in rows
        if not r.warmup and not r.flops_counted and r.seconds is not None and r.h2d_bytes is not None
    ]
    seconds = sum(r.seconds or 0.0 for r in steady)
    if steady:
        out.h2d_bytes_per_step = stat([float(r.h2d_bytes or 0) for r in steady])
        out.d2h_bytes_per_step = stat([float(r.d2h_bytes or 0) for r in steady])
    if seconds > 0:
        out.h2d_bytes_per_second = round(sum(r.h2d_bytes or 0 for r in steady) / seconds, 3)
        out.d2h_bytes_per_second = round(sum(r.d2h_bytes or 0 for r in steady) / seconds, 3)
    return out


def sent_rates(sent: Mapping[str, int] | None, lifetime: float | None) -> dict[str, Any]:
    """A process's sends (``{"count", "bytes", "shared_count", "shared_bytes"}``) as the fields of
    its ``TrainingProcess`` row, the rates over its ``lifetime`` (None or 0: no rate)."""
    if not sent:
        return {}
    pickled, shared = int(sent.get("bytes", 0)), int(sent.get("shared_bytes", 0))
    alive = lifetime is not None and lifetime > 0
    return {
        "pickles": int(sent.get("count", 0)),
        "pickled_bytes": pickled,
        "pickled_bytes_per_second": round(pickled / lifetime, 3) if alive and lifetime else None,
        "shared_storages": int(sent.get("shared_count", 0)),
        "shared_bytes": shared,
        "shared_bytes_per_second": round(shared / lifetime, 3) if alive and lifetime else None,
    }


TOP_COPY_LINES = 3


def data_movement_figures(t: Training) -> tuple[TrainingFigure, ...]:
    """The reports' rows for the copies across devices (after ``training_figures``): bytes per
    steady step and per second each way, the total between devices, and the lines that copied
    most. Empty when no copy crossed a device."""
    c = t.copies
    if c is None:
        return ()
    rows = [
        TrainingFigure(
            "host->device per step",
            c.h2d_bytes_per_step.median if c.h2d_bytes_per_step else None,
            "bytes",
            c.h2d_bytes_per_step,
            note=f"{c.copies} copies across devices in the run",
        ),
        TrainingFigure("host->device bytes/s", c.h2d_bytes_per_second, "byte_rate"),
        TrainingFigure(
            "device->host per step",
            c.d2h_bytes_per_step.median if c.d2h_bytes_per_step else None,
            "bytes",
            c.d2h_bytes_per_step,
        ),
        TrainingFigure("device->host bytes/s", c.d2h_bytes_per_second, "byte_rate"),
        TrainingFigure("device->device in the run", c.d2d_bytes or None, "bytes"),
    ]
    rows += [
        TrainingFigure(
            f"copied at {line.line or 'unknown lines'}",
            line.bytes,
            "bytes",
            note=f"{line.direction}, {line.copies} copies in the run",
        )
        for line in c.lines[:TOP_COPY_LINES]
    ]
    return tuple(r for r in rows if r.value is not None)
