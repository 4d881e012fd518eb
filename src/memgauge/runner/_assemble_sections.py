"""The sections' parts of a run's profile (torch, GPU, training), each put together by its
section's "assemble" part (``memgauge.sections``), in the sections' order, only where the run left
something for it: a torch or training record in the events directory, or NVML's samples. A run
without torch, a GPU or a loop (most runs) loads none of their readers, analyses and records,
whose dataclasses alone cost ~15 ms after the program's end, where every millisecond is the run's."""

from __future__ import annotations

from memgauge.capture import records_written
from memgauge.sections import ordered

TYPE_CHECKING = False  # not typing's: a run imports no typing (docs/benchmarks.md)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from memgauge.capture import LineData
    from memgauge.model import CaptureWarning, CpuUsage, ProcessRecord
    from memgauge.runner._options import RunOptions
    from memgauge.runner._watch import Watched


class SectionInputs:
    """What a section's "assemble" part may read of a finished run, and where it puts its part.

    ``written``: the record kinds the run's processes wrote (``capture.records_written``), and
    ``sources`` those with the sources of the watches that saw something ("nvml");
    ``watched``: what each section's watch saw, by section name (``runner._watch``: the GPU
    section's NVML samples, or None and why not); ``cpu()``: the run's CPU usage (computed on
    first call); ``parts``: the ``Profile`` fields assembled so far, by field (a section reads the
    parts of those it comes after); ``measurement``: the profile's ``measurement`` lines; a
    section's part adds its line's GPU time to ``line_data``."""

    def __init__(
        self,
        events_dir: str,
        t0: float,
        options: RunOptions,
        watched: dict[str, Watched],
        processes: list[ProcessRecord],
        line_data: LineData,
        warnings: list[CaptureWarning],
        cpu: Callable[[], CpuUsage],
        measurement: dict[str, Any],
    ) -> None:
        self.events_dir = events_dir
        self.t0 = t0
        self.options = options
        self.watched = watched
        self.processes = processes
        self.line_data = line_data
        self.warnings = warnings
        self.cpu = cpu
        self.measurement = measurement
        self.written = records_written(events_dir)
        self.sources = self.written | {w.source for w in watched.values() if w.seen is not None}
        self.parts: dict[str, Any] = {}


def section_parts(inputs: SectionInputs) -> dict[str, Any]:
    """The ``Profile`` fields of every section that has something of the run, and their lines in
    ``inputs.measurement``: each watch's (the GPU's: why NVML saw nothing), which its section's
    part replaces where it assembles (what NVML saw)."""
    for name, watched in inputs.watched.items():
        inputs.measurement[name] = watched.why
    for spec in ordered():
        if inputs.sources.intersection(spec.sources):  # else its modules stay unloaded
            assemble = spec.part("assemble")
            if assemble is not None:
                assemble(inputs)
    return inputs.parts
