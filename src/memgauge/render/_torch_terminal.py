"""The torch section of the terminal report: tensor bytes by role at the peak, the modules holding
the most, steps, a step leak and an out-of-memory error. Nothing at all for a profile without
torch figures, so those reports are unchanged. The rows come from ``analysis.torch_summary``."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import torch_summary
from memgauge.model import Profile
from memgauge.render._format import percent
from memgauge.render._layout import Layout
from memgauge.render._text import torch_leak_text, torch_oom_text


def torch_section(out: Console, profile: Profile, width: int) -> None:
    summary = torch_summary(profile, top_modules=5)
    torch = profile.torch
    if summary is None or torch is None:
        return
    title = f"torch tensors ({summary.mode}): peak {format_bytes(summary.peak_bytes)}"
    if summary.steps:
        title += f", {summary.steps} steps"
        if summary.median_step_seconds is not None:
            title += f" (median {format_seconds(summary.median_step_seconds)})"
    layout = Layout(width, title)
    layout.name("role", most=16)
    for header in ("at peak", "share", "max", "end"):
        layout.figure(header)
    for row in summary.roles:
        layout.add_row(
            Text(row.role.replace("_", " ")),
            Text(format_bytes(row.at_peak_bytes)),
            Text(percent(row.share)),
            Text(format_bytes(row.max_bytes)),
            Text(format_bytes(row.end_bytes)),
        )
    out.print(layout.fit(layout.named("end", "max")))
    if summary.modules:
        modules = Layout(width, "modules at the torch peak")
        modules.name("module", most=40)
        modules.figure("bytes")
        modules.rest("roles", least=10)
        for m in summary.modules:
            roles = ", ".join(f"{role.replace('_', ' ')} {format_bytes(n)}" for role, n in m.by_role)
            modules.add_row(Text(m.module), Text(format_bytes(m.bytes)), Text(roles))
        out.print(modules.fit(modules.named("roles")))
    leak = summary.leak
    if leak is not None:
        out.print(Text(torch_leak_text(leak), style="yellow"))
    oom = torch.oom
    if oom is not None:
        out.print(Text(torch_oom_text(oom), style="bold red"))
