"""The profile's ``training`` part: the loops' records read back and summarised.

One call from ``_assemble``: read what the processes' throughput loops wrote (``capture``), let
``analysis.summarize_training`` turn the main loop's steps into rates, shares and the verdict, and
list the run's processes with their CPU (from the watcher's records) and I/O (from the loops'
records), the loop's own process and its DataLoader workers named, and the CPU over time (the
watcher's per-core and per-process series) with its steady-state figures.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from memgauge.model import CaptureWarning, CpuUsage, ProcessRecord
from memgauge.sections.gpu import GpuDevice
from memgauge.sections.training._read import LoopRecord, read_training
from memgauge.sections.training._record import Training, TrainingProcess

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.runner import SectionInputs


def training_of(
    events_dir: str | os.PathLike[str],
    t0: float,
    processes: Sequence[ProcessRecord] = (),
    *,
    warnings: list[CaptureWarning] | None = None,
    cpu: CpuUsage | None = None,
    gpu: Sequence[GpuDevice] = (),
) -> Training | None:
    """The run's throughput figures; None when no process stepped or counted anything."""
    record = read_training(events_dir, t0, warnings=warnings)
    if record is None or not (record.steps or record.counters or record.pickles or record.copies):
        return None
    # here: a run without a loop (most runs) imports none of the training analyses
    from memgauge.sections.training._analysis import summarize_training
    from memgauge.sections.training._analysis_cpu import with_cpu
    from memgauge.sections.training._analysis_gpu import with_gpu
    from memgauge.sections.training._analysis_movement import summarize_copies

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
    training.copies = summarize_copies(training.rows, record.copies)
    training.processes = process_rows(record, processes, cpu)
    # the watcher's CPU series, and the steady state's CPU (the roles come from the processes)
    # and NVML's utilisation over the steady steps, which sharpens the bound
    return with_gpu(with_cpu(training, cpu), gpu)


def process_rows(
    record: LoopRecord, processes: Sequence[ProcessRecord], usage: CpuUsage | None = None
) -> list[TrainingProcess]:
    from memgauge.sections.training._analysis_movement import sent_rates

    # the watcher's last read of each process's I/O counters, for those that wrote no loop record
    watched = {s.pid: s for s in usage.processes} if usage is not None else {}
    rows = []
    for p in processes:
        role, io = record.roles.get(p.pid, ("", None))
        cpu = p.cpu_user_seconds + p.cpu_system_seconds
        life = (p.end_seconds or 0.0) - p.start_seconds  # None: still running at the end
        seen = watched.get(p.pid)
        if io is None and seen is not None:
            counters = (seen.rchar, seen.wchar, seen.read_bytes, seen.write_bytes)
            keys = ("rchar", "wchar", "read_bytes", "write_bytes")
            io = {k: v for k, v in zip(keys, counters, strict=True) if v is not None} or None
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
                read_per_second=_rate(io.get("rchar"), life),
                written_per_second=_rate(io.get("wchar"), life),
                **sent_rates(record.pickles.get(p.pid), life),
            )
        )
    return rows


def _rate(count: int | None, seconds: float) -> float | None:
    return None if count is None or seconds <= 0 else round(count / seconds, 1)


def assemble_training(run: SectionInputs) -> None:
    """The training section's part of a finished run (the registry's "assemble"), where a loop
    wrote its records; after the GPU's part, whose devices it reads."""
    if "training" in run.written:
        gpu = run.parts.get("gpu", [])
        run.parts["training"] = training_of(
            run.events_dir, run.t0, run.processes, warnings=run.warnings, cpu=run.cpu(), gpu=gpu
        )
