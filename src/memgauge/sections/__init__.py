"""The sections: the features that plug into the core (torch, GPU, training), one folder each.

A section owns every layer of its feature in its folder: the part that runs in the measured
process (``_capture*``), the reader of what that wrote (``_read``), its part of the profile
(``_record``), its analyses (``_analysis*``), the assembly of a run's part (``_assemble``), its
report blocks (``_report*``) and its budget checks (``_budget``). The core reaches a section only
through this registry, by the names of its parts, so that it imports no section's module before
a run has something for it: the measured process loads the torch section when the program
imports torch, ``memgauge run`` loads the GPU section's readers only where the run used a GPU.

``SECTIONS`` lists them in report order; ``after`` names the sections one builds on, which come
first wherever the core calls every section (assembly: training reads the GPU's part). A part is
``"module:name"`` relative to the section's package. Standard library only, no ``typing`` at run
time: the measured process imports this module.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


class SectionSpec:
    """One section: its ``name`` (its folder), the ``Profile`` field that holds its part of the
    record, the sections it comes ``after``, the ``sources`` of its part of a run, and its
    ``parts``: what the core may call, by kind ("capture", "torch", "watch", "assemble", "record",
    "report", "page_data", "budget", "block", "compare", "compare_report": docs/architecture.md), each
    ``"module:name"`` in its folder
    (``"module:"``: the module itself)."""

    __slots__ = ("after", "field", "name", "package", "parts", "sources")

    def __init__(
        self,
        name: str,
        field: str,
        after: tuple[str, ...],
        parts: dict[str, str],
        package: str = "",
        sources: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.field = field
        self.after = after
        self.parts = parts
        # what gives it something to assemble: the record kinds the run's processes wrote
        # (``capture.records_written``), and those of the sections' watches where they saw
        # something ("nvml": the GPU section's NVML samples); its "assemble" part loads only
        # where one of them is there
        self.sources = sources
        self.package = package or f"{__name__}.{name}"  # another package: a section outside memgauge

    def shows(self, profile: Any) -> bool:
        """Whether the section may have something to report on ``profile`` (its "shows" part, a
        cheap test that imports none of its analyses); True where it has no such part."""
        test = self.part("shows")
        return True if test is None else bool(test(profile))

    def part(self, kind: str) -> Any:
        """The part of ``kind``, imported on first use; None where the section has none."""
        ref = self.parts.get(kind)
        if ref is None:
            return None
        module, _, name = ref.partition(":")
        loaded = importlib.import_module(f"{self.package}.{module}")
        return getattr(loaded, name) if name else loaded


SECTIONS: list[SectionSpec] = [
    SectionSpec(
        "torch",
        "torch",
        (),
        sources=("torch", "nvml"),
        parts={
            "assemble": "_assemble:assemble_torch",
            "report": "_report:REPORT",
            "shows": "_shows:shows",
            "record": "_record:read_part",
            "block": "_inprocess:BlockTorch",
            "capture": "_capture:install",
            "compare": "_analysis_compare:compare",
            "compare_report": "_report_compare:",
            "page_data": "_report_html:torch_data",
        },
    ),
    SectionSpec(
        "training",
        "training",
        ("torch", "gpu"),
        sources=("training",),
        parts={
            "assemble": "_assemble:assemble_training",
            "report": "_report:REPORT",
            "shows": "_shows:shows",
            "budget": "_budget:",
            "record": "_record:read_part",
            "block": "_inprocess:BlockTraining",
            "torch": "_capture_plug:",
            "capture": "_capture_pickles:start",
            "compare": "_analysis_compare:compare_training",
            "compare_report": "_report_compare:",
            "page_data": "_report_html:training_data",
        },
    ),
    SectionSpec(
        "gpu",
        "gpu",
        ("torch",),
        sources=("torch", "nvml"),
        parts={
            "assemble": "_assemble:assemble_gpu_part",
            "report": "_report:REPORT",
            "shows": "_shows:shows",
            "budget": "_budget:",
            "record": "_record:read_part",
            "block": "_inprocess:BlockGpu",
            "torch": "_capture_plug:",
            "watch": "_nvml_start:",
        },
    ),
]


def ordered(sections: list[SectionSpec] | None = None) -> Iterator[SectionSpec]:
    """Every section (of ``SECTIONS`` by default) after those it builds on, else in report order;
    a section it builds on that is not registered is no constraint."""
    sections = SECTIONS if sections is None else sections
    names = {s.name for s in sections}
    done: set[str] = set()
    pending = list(sections)
    while pending:
        ready = [s for s in pending if all(a in done or a not in names for a in s.after)]
        if not ready:
            raise RuntimeError(f"sections that build on each other: {', '.join(s.name for s in pending)}")
        for spec in ready:
            pending.remove(spec)
            done.add(spec.name)
            yield spec


def section(name: str) -> SectionSpec:
    """The registered section ``name``."""
    for spec in SECTIONS:
        if spec.name == name:
            return spec
    raise KeyError(name)


__all__ = ["SECTIONS", "SectionSpec", "ordered", "section"]
