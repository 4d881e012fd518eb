"""The torch section's sentences: a leak across steps and an out-of-memory error, as the report
says them."""

from __future__ import annotations

from memgauge._units import format_bytes
from memgauge.sections.torch._analysis import StepLeak
from memgauge.sections.torch._record import TorchOom


def torch_leak_text(leak: StepLeak) -> str:
    """A leak across steps, with the line whose tensors pile up and what to do about it."""
    return (
        f"tensors grow {format_bytes(leak.bytes_per_step)} a step (steps {leak.first_step}-"
        f"{leak.last_step}, {', '.join(leak.roles) or 'roles'}), held by tensors made at "
        f"{leak.line or 'an unknown line'}: keep .item() or .detach(), not the tensor"
    )


def torch_oom_text(oom: TorchOom) -> str:
    """What torch asked for when it ran out of memory, and what was held then."""
    asked = format_bytes(oom.requested_bytes) if oom.requested_bytes is not None else "an unknown size"
    held = ", ".join(f"{k.replace('_', ' ')} {format_bytes(v)}" for k, v in oom.by_role.items() if v)
    return (
        f"torch ran out of memory ({oom.device or 'device unknown'}, {oom.where}) asking for "
        f"{asked}, holding {format_bytes(oom.total_bytes)}: {held or 'nothing tracked'}"
    )
