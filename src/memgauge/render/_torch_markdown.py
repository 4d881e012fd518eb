"""The torch section of the Markdown report: tensor bytes by role at the peak, the modules holding
the most, a leak across steps and an out-of-memory error. Nothing for a profile without torch
figures, so those reports are unchanged. The rows come from ``analysis.torch_summary``."""

from __future__ import annotations

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import torch_summary
from memgauge.model import Profile
from memgauge.render._format import md_code, md_table, md_text, percent
from memgauge.render._text import torch_leak_text, torch_oom_text


def torch_blocks(profile: Profile) -> list[list[str]]:
    summary = torch_summary(profile, top_modules=5)
    torch = profile.torch
    if summary is None or torch is None:
        return []
    title = f"torch tensors ({summary.mode}): peak {format_bytes(summary.peak_bytes)}"
    if summary.steps:
        title += f", {summary.steps} steps"
        if summary.median_step_seconds is not None:
            title += f" (median {format_seconds(summary.median_step_seconds)})"
    roles = [
        [
            r.role.replace("_", " "),
            format_bytes(r.at_peak_bytes),
            percent(r.share),
            format_bytes(r.max_bytes),
            format_bytes(r.end_bytes),
        ]
        for r in summary.roles
    ]
    # blank line between: a table straight under a paragraph line would take it as its header
    blocks = [
        [f"**{md_text(title)}**"],
        md_table(["role", "at peak", "share", "max", "end"], [":---"] + ["---:"] * 4, roles),
    ]
    if summary.modules:
        rows = [
            [
                md_code(m.module),
                format_bytes(m.bytes),
                md_text(", ".join(f"{role.replace('_', ' ')} {format_bytes(n)}" for role, n in m.by_role)),
            ]
            for m in summary.modules
        ]
        blocks += [
            ["**modules at the torch peak**"],
            md_table(["module", "bytes", "roles"], [":---", "---:", ":---"], rows),
        ]
    if summary.leak is not None:
        blocks.append([f"> {md_text(torch_leak_text(summary.leak))}"])
    if torch.oom is not None:
        blocks.append([f"> {md_text(torch_oom_text(torch.oom))}"])
    return blocks
