"""The profile's ``training`` part: the loops' records read back and summarised.

One call from ``_assemble``: read what the processes' throughput loops wrote (``capture``), let
``analysis.summarize_training`` turn the main loop's steps into rates, shares and the verdict, and
list the run's processes with their CPU (from the watcher's records) and I/O (from the loops'
records), the loop's own process and its DataLoader workers named.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from memgauge.analysis import summarize_training
from memgauge.capture import LoopRecord, read_training
from memgauge.model import CaptureWarning, ProcessRecord, Training, TrainingProcess


def training_of(
    events_dir: str | os.PathLike[str],
    t0: float,
    processes: Sequence[ProcessRecord] = (),
    *,
    warnings: list[CaptureWarning] | None = None,
) -> Training | None:
    """The run's throughput figures; None when no process stepped or counted anything."""
    record = read_training(events_dir, t0, warnings=warnings)
    if record is None or (not record.steps and not record.counters):
        return None
    flops = record.flops or {}
    by = flops.get("by") or []
    peak = record.peak or {}
    training = summarize_training(
        record.steps,
        pid=record.pid,
        steps_dropped=record.steps_dropped,
        fetches=record.fetches,
        counters=record.counters,
        flops=int(flops["total"]) if flops else None,
        device=str(by[0][0]) if by else "",
        device_name=str(flops.get("device_name", "")),
        dtype=str(by[0][1]) if by else "",
        measured_peak=float(peak["flops_per_second"]) if peak else None,
        measured_peak_source=str(peak.get("source", "")),
    )
    training.processes = process_rows(record, processes)
    return training


def process_rows(record: LoopRecord, processes: Sequence[ProcessRecord]) -> list[TrainingProcess]:
    rows = []
    for p in processes:
        role, io = record.roles.get(p.pid, ("", None))
        cpu = p.cpu_user_seconds + p.cpu_system_seconds
        life = (p.end_seconds or 0.0) - p.start_seconds  # None: still running at the end
        io = io or {}
        rows.append(
            TrainingProcess(
                pid=p.pid,
                role=role,
                command=" ".join(p.cmdline)[:200],
                cpu_seconds=round(cpu, 3),
                cpu_share=round(cpu / life, 3) if life > 0 else None,
                read_bytes=io.get("read_bytes"),
                write_bytes=io.get("write_bytes"),
                rchar=io.get("rchar"),
                wchar=io.get("wchar"),
            )
        )
    return rows
