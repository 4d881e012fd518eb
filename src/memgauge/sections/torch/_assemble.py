"""The torch section's part of a finished run (the registry's "assemble"): the tensors its
processes' trackers wrote, read back where the run imported torch or used a GPU."""

from __future__ import annotations

from memgauge.sections.torch._read import read_torch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.runner import SectionInputs


def assemble_torch(run: SectionInputs) -> None:
    if run.options.torch != "off" and ("torch" in run.written or "nvml" in run.sources):
        run.parts["torch"] = read_torch(run.events_dir, run.t0, warnings=run.warnings)
