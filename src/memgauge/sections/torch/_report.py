"""The torch section, built once for every format: tensor bytes by role at the peak (and a chart
of each step's peak by role on the page), the modules holding the most, a leak across steps and an
out-of-memory error. Nothing for a profile without torch figures. The rows come from
``analysis.torch_summary``."""

from __future__ import annotations

from collections.abc import Sequence

from memgauge._units import format_bytes, format_seconds
from memgauge.model import Profile
from memgauge.render import (
    Block,
    Chart,
    Column,
    Paragraph,
    Section,
    Table,
    percent,
)
from memgauge.sections.torch._analysis import torch_summary
from memgauge.sections.torch._report_text import torch_leak_text, torch_oom_text

# the modules shown: as many as the terminal's other tables show lines
TOP_MODULES = 8
_ROLES = (Column("role", "name", most=16), *(Column(h) for h in ("at peak", "share", "max", "end")))
_MODULES = (Column("module", "name", most=40, code=True), Column("bytes"), Column("roles", "rest"))
_NOTE = (
    "Tensor bytes counted by storage (a view adds nothing), each under the first role that "
    "applies. The chart stacks each step's peak by role; the tables are at the largest tensor "
    "total of the run."
)


def _role(name: str) -> str:
    return name.replace("_", " ")


def _by_role(by_role: Sequence[tuple[str, int]]) -> str:
    return ", ".join(f"{_role(role)} {format_bytes(n)}" for role, n in by_role)


def torch_section(profile: Profile) -> Section | None:
    summary = torch_summary(profile, top_modules=TOP_MODULES)
    torch = profile.torch
    if summary is None or torch is None:
        return None
    title = f"torch tensors ({summary.mode}): peak {format_bytes(summary.peak_bytes)}"
    if summary.steps:
        title += f", {summary.steps} steps"
        if summary.median_step_seconds is not None:
            title += f" (median {format_seconds(summary.median_step_seconds)})"
    blocks: list[Block] = [Chart("chart-torch-steps")] if torch.steps else []
    roles = tuple(
        (
            _role(r.role),
            format_bytes(r.at_peak_bytes),
            percent(r.share),
            format_bytes(r.max_bytes),
            format_bytes(r.end_bytes),
        )
        for r in summary.roles
    )
    blocks.append(Table(title, _ROLES, roles, optional=("end", "max")))
    if summary.modules:
        modules = tuple((m.module, format_bytes(m.bytes), _by_role(m.by_role)) for m in summary.modules)
        blocks.append(Table("modules at the torch peak", _MODULES, modules, optional=("roles",)))
    if summary.leak is not None:
        blocks.append(Paragraph(torch_leak_text(summary.leak), "warn"))
    if torch.oom is not None:
        blocks.append(Paragraph(torch_oom_text(torch.oom), "bad"))
    return Section(title, tuple(blocks), _NOTE)


# the registry's "report": (id, nav label, builder) of each of the section's report sections, in
# report order
REPORT = (("torch", "torch", torch_section),)
