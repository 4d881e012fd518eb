"""The torch chart's data on the HTML page: each step's peak split by role; nothing without torch
steps. The section itself is built with the other formats' (``_report``)."""

from __future__ import annotations

from typing import Any

from memgauge.model import Profile
from memgauge.sections.torch._analysis import torch_steps
from memgauge.sections.torch._record import TORCH_ROLES

# bars drawn: a run of 5000 steps is shown as this many, each the step with the highest peak of
# its stretch, so a spike is never averaged away and the page stays small
_MAX_BARS = 400


def _role(name: str) -> str:
    return name.replace("_", " ")


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
