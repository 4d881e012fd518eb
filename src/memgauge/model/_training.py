"""The training part of a ``Profile``: how fast a loop ran, what it waited for, what bounds it.

Optional data (``Profile.training``, None when the program ran no steps), added without a schema
bump. Rates are per second of the steps' own wall time; ``data_wait_share`` is 0..1; ``mfu`` is
None where the device's peak is unknown. The fields are documented in ``docs/profile-schema.md``
("training").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Training:
    """A loop's throughput over its steps (optimizer steps or ``memgauge.step()``)."""

    steps: int
    steps_per_second: float | None = None
    samples_per_second: float | None = None
    data_wait_share: float | None = None
    flops_per_step: int | None = None
    mfu: float | None = None
    bound: str = ""
    warmup_steps: int = 0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Training:
        return cls(**data)
