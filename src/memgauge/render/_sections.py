"""The report's sections built on the document (``_document``), in report order: the terminal,
Markdown and HTML reports of a run render these, one after the other, at the same place. A new
section is a function from a ``Profile`` to a ``Section`` registered here."""

from __future__ import annotations

from memgauge.render._document import Registry
from memgauge.render._section_gpu import gpu_section
from memgauge.render._section_torch import torch_section
from memgauge.render._section_training import phase_io_section, training_section

SECTIONS = Registry()
SECTIONS.register("torch", "torch", torch_section)
SECTIONS.register("training", "training", training_section)
SECTIONS.register("phase-io", "I/O", phase_io_section)
SECTIONS.register("gpu", "GPU", gpu_section)
