"""Reading the throughput loops' records (``training.<pid>.json``, see ``_wire``).

Runs in the runner, after the program. A record that does not pass the wire format is left out
with a warning naming its file. The steps are those of the process that ran the most (a training
script's DataLoader workers import torch too, and step nothing); ``memgauge.step(kind)`` counters
are summed over every process (a data-generation loop spread over processes counts all of them).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memgauge.capture import (
    TRAINING,
    TRAINING_COPIES_FIELDS,
    TRAINING_FIELDS,
    TRAINING_FLOPS_FIELDS,
    TRAINING_OPTIONAL,
    TRAINING_PEAK_FIELDS,
    TRAINING_PICKLES_FIELDS,
    TRAINING_STEP_ROW,
    layout_problem,
    problem,
    read_records,
)
from memgauge.model import CaptureWarning
from memgauge.sections.training._record import TrainingCounter, TrainingStep


@dataclass
class LoopRecord:
    """What the processes' loops wrote: the main loop's steps (times from the run's start), every
    process's counters, and the counted step's FLOPs and the device's measured peak, if any."""

    pid: int
    steps: list[TrainingStep]
    steps_dropped: int = 0
    fetches: int = 0
    counters: list[TrainingCounter] = field(default_factory=list)
    # {"step", "total", "by": [[device, dtype, flops]], "device_name"}
    flops: dict[str, Any] | None = None
    # {"flops_per_second", "dtype", "source"}: a peak measured on this machine (the CPU's)
    peak: dict[str, Any] | None = None
    # every process that wrote a record: pid -> (its role, its /proc/self/io counters or None)
    roles: dict[int, tuple[str, dict[str, int] | None]] = field(default_factory=dict)
    # the main loop's copies across devices (``_capture_copies.Copies.record``), if it counted any
    copies: dict[str, Any] | None = None
    # every process that sent pickles: pid -> {"count", "bytes", "shared_count", "shared_bytes"}
    pickles: dict[int, dict[str, int]] = field(default_factory=dict)


def _check(record: Any) -> str | None:
    found = problem(record, TRAINING_FIELDS, TRAINING_OPTIONAL)
    if found is not None:
        return found
    found = next(filter(None, map(_step_problem, record["steps"])), None)
    if found is not None:
        return found
    for kind, counter in record["counters"].items():
        if not isinstance(counter, list) or len(counter) != 3:
            return f"counter {kind!r} is not [count, first, last]"
    parts: list[tuple[str, Callable[[dict[str, Any]], str | None], str]] = [
        ("flops", lambda r: layout_problem(r["flops"], TRAINING_FLOPS_FIELDS), "the FLOP count"),
        ("peak", lambda r: layout_problem(r["peak"], TRAINING_PEAK_FIELDS), "the measured peak"),
        ("copies", _copies_problem, "the copies across devices"),
        ("pickles", lambda r: layout_problem(r["pickles"], TRAINING_PICKLES_FIELDS), "the pickled bytes"),
    ]
    for key, check, what in parts:
        found = check(record) if key in record else None
        if found is not None:
            return f"{what}: {found}"
    return None


def _step_problem(row: object) -> str | None:
    if not isinstance(row, list) or len(row) != len(TRAINING_STEP_ROW):
        return f"a step row is not {len(TRAINING_STEP_ROW)} values"
    end, seconds, wait, samples, kind, tokens = row
    if not all(isinstance(v, (int, float)) for v in (end, wait)) or not isinstance(kind, str):
        return "a step row has a field of the wrong type"
    if seconds is not None and not isinstance(seconds, (int, float)):
        return "a step row's seconds is not a number"
    if any(n is not None and not isinstance(n, int) for n in (samples, tokens)):
        return "a step row's samples or tokens is not an integer"
    return None


def _copies_problem(record: dict[str, Any]) -> str | None:
    found = layout_problem(record["copies"], TRAINING_COPIES_FIELDS)
    if found is None and len(record["copies"]["steps"]) != len(record["steps"]):
        return "not one row per step"
    if found is None and not all(_three_ints(r) for r in record["copies"]["steps"]):
        return "a step's row is not three integers"
    return found


def _loops(record: dict[str, Any]) -> bool:
    """Whether the process ran a loop (not only sent pickles)."""
    return bool(record["steps"] or record.get("fetches") or record["counters"])


def _three_ints(row: object) -> bool:
    return isinstance(row, list) and len(row) == 3 and all(isinstance(v, int) for v in row)


def _steps(record: dict[str, Any], t0: float) -> list[TrainingStep]:
    flops = record.get("flops")
    counted = int(flops["step"]) if flops else -1
    copied = record["copies"]["steps"] if "copies" in record else None
    return [
        TrainingStep(
            index=i,
            end_seconds=round(float(end) - t0, 6),
            seconds=None if seconds is None else round(float(seconds), 6),
            wait_seconds=round(float(wait), 6),
            samples=None if samples is None else int(samples),
            kind=str(kind),
            flops_counted=i == counted,
            tokens=None if tokens is None else int(tokens),
            h2d_bytes=None if copied is None else int(copied[i][0]),
            d2h_bytes=None if copied is None else int(copied[i][1]),
        )
        for i, (end, seconds, wait, samples, kind, tokens) in enumerate(record["steps"])
    ]


def _counters(records: list[dict[str, Any]]) -> list[TrainingCounter]:
    totals: dict[str, list[float]] = {}
    for record in records:
        for kind, (count, first, last) in record["counters"].items():
            total = totals.setdefault(kind, [0, 0.0])
            total[0] += int(count)
            # each process's own span; the rate is the sum of the processes' rates
            if int(count) > 1 and float(last) > float(first):
                total[1] += (int(count) - 1) / (float(last) - float(first))
    return [
        TrainingCounter(kind, int(count), round(rate, 3) if rate > 0 else None)
        for kind, (count, rate) in sorted(totals.items())
    ]


def read_training(
    directory: str | os.PathLike[str], t0: float, *, warnings: list[CaptureWarning] | None = None
) -> LoopRecord | None:
    """The loops of the run, or None when no process stepped, fetched or counted anything."""
    records, problems = read_records(os.fspath(directory), TRAINING, _check)
    for name, why in problems:
        _warn(warnings, name, f"{why}: this process's throughput figures are missing")
    if not records:
        return None
    main = max(records, key=lambda r: (len(r["steps"]), int(r.get("fetches", 0))))
    return LoopRecord(
        pid=int(main["pid"]),
        steps=_steps(main, t0),
        steps_dropped=int(main.get("steps_dropped", 0)),
        fetches=int(main.get("fetches", 0)),
        counters=_counters(records),
        flops=main.get("flops"),
        peak=main.get("peak"),
        copies=main.get("copies"),
        pickles={int(r["pid"]): r["pickles"] for r in records if "pickles" in r},
        roles={
            int(r["pid"]): (
                str(r.get("role", "")) or ("main loop" if r is main and _loops(r) else ""),
                {str(k): int(v) for k, v in r["io"].items() if isinstance(v, int)} if "io" in r else None,
            )
            for r in records
        },
    )


def _warn(warnings: list[CaptureWarning] | None, name: str, message: str) -> None:
    if warnings is not None:
        warnings.append(CaptureWarning(file=name, message=message))
