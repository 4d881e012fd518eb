"""The torch section of the HTML report: a stacked chart of tensor bytes by role over the steps,
the roles at the peak and the modules holding them, a leak across steps and an out-of-memory error.

Registered in ``_html``'s ``SECTIONS``; a profile without torch figures gets neither the section
nor the chart's data, so its page is unchanged. The rows come from ``analysis.torch_summary`` and
``analysis.torch_steps``, the same the terminal and Markdown reports show.
"""

from __future__ import annotations

from typing import Any

from memgauge._units import format_bytes
from memgauge.analysis import torch_steps, torch_summary
from memgauge.model import TORCH_ROLES, Profile
from memgauge.render._format import esc
from memgauge.render._html_page import Cell, Part, nbytes, share, table, text
from memgauge.render._html_tables import ProfileView
from memgauge.render._text import torch_leak_text, torch_oom_text

# bars drawn: a run of 5000 steps is shown as this many, each the step with the highest peak of
# its stretch, so a spike is never averaged away and the page stays small
_MAX_BARS = 400


def _role(name: str) -> str:
    return name.replace("_", " ")


def torch_section(v: ProfileView) -> Part | None:
    summary = torch_summary(v.profile)
    torch = v.profile.torch
    if summary is None or torch is None:
        return None
    parts: list[str] = []
    if torch.steps:
        parts.append('<div class="chart tall"><canvas id="chart-torch-steps"></canvas></div>')
    roles = [
        [
            text(_role(r.role)),
            nbytes(r.at_peak_bytes),
            share(r.at_peak_bytes, summary.peak_bytes),
            nbytes(r.max_bytes),
            nbytes(r.end_bytes),
        ]
        for r in summary.roles
    ]
    parts.append(
        table([("role", False), ("at peak", True), ("share", True), ("max", True), ("end", True)], roles)
    )
    if summary.modules:
        rows = [
            [
                Cell(f"<code>{esc(m.module)}</code>", m.module),
                nbytes(m.bytes),
                text(", ".join(f"{_role(role)} {format_bytes(n)}" for role, n in m.by_role)),
            ]
            for m in summary.modules
        ]
        parts.append("<h3>modules at the peak</h3>")
        parts.append(table([("module", False), ("bytes", True), ("roles", False)], rows))
    if summary.leak is not None:
        parts.append(f'<p class="bad">{esc(torch_leak_text(summary.leak))}</p>')
    if torch.oom is not None:
        parts.append(f'<p class="bad">{esc(torch_oom_text(torch.oom))}</p>')
    steps = f", {summary.steps} steps" if summary.steps else ""
    return Part(
        "".join(parts),
        f"torch tensors ({summary.mode}){steps}",
        "Tensor bytes counted by storage (a view adds nothing), each under the first role that "
        "applies. The chart stacks each step's peak by role; the tables are at the largest tensor "
        "total of the run.",
    )


def torch_data(p: Profile) -> dict[str, Any] | None:
    """The chart's data: per step (or per stretch of steps, see ``_MAX_BARS``), the step's peak
    split by role; None without torch figures or steps."""
    if p.torch is None or not p.torch.steps:
        return None
    steps = torch_steps(p.torch)
    size = -(-len(steps) // _MAX_BARS)
    shown = [max(steps[i : i + size], key=lambda s: s.peak_bytes) for i in range(0, len(steps), size)]
    return {
        "labels": [str(s.index + 1) for s in shown],
        "roles": [_role(r) for r in TORCH_ROLES],
        "values": [[s.peak_by_role[i] for s in shown] for i in range(len(TORCH_ROLES))],
    }
