"""The torch part of a ``Profile``: where a training run's tensor memory went, by role, module and step.

Optional data (``Profile.torch``, None when the program never imported torch or ran with
``--torch=off``), added without a schema bump: profiles of schema 1 to 5 without it still read.
Every byte figure counts storages, not tensors: a view adds nothing, a slice keeps its base.
The fields are documented in ``docs/profile-schema.md`` ("torch").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# the six roles, in the order a storage playing several is counted under (the first that applies)
TORCH_ROLES = ("parameters", "gradients", "optimizer_state", "activations", "temporaries", "other")


def _roles(data: Any) -> dict[str, int]:
    given = dict(data or {})
    return {role: int(given.get(role, 0)) for role in TORCH_ROLES}


@dataclass
class TorchTensor:
    """One live storage: its bytes, the shape of the tensor that owns it (a view's base), what
    holds it (``role``; ``name`` for a parameter, its ``.grad`` or optimizer state) and the
    program's line that created it (``file:line``; empty where not known)."""

    bytes: int
    shape: list[int] = field(default_factory=list)
    dtype: str = ""
    device: str = ""
    role: str = "other"
    name: str = ""
    line: str = ""
    module: str = ""
    id: int = 0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TorchTensor:
        return cls(**{**data, "shape": [int(n) for n in data.get("shape", [])]})


@dataclass
class TorchModule:
    """``bytes`` of ``role`` attributed to ``module`` (a qualified name, the outermost module's
    class first: ``MLP.layers.0``) at the peak."""

    role: str
    module: str
    bytes: int


@dataclass
class TorchStep:
    """One training (or ``memgauge.step()``) step of process ``pid``: its wall time, split into
    forward, backward and optimizer where seen, the largest tensor total while it ran and the total
    at its end, both by role; ``retained`` the creating lines holding the most activation,
    temporary and other bytes at its end (what a leak across steps piles up)."""

    index: int
    start_seconds: float
    seconds: float
    peak_bytes: int
    end_bytes: int = 0
    forward_seconds: float = 0.0
    backward_seconds: float = 0.0
    optimizer_seconds: float = 0.0
    kind: str = "optimizer"
    peak_by_role: dict[str, int] = field(default_factory=dict)
    end_by_role: dict[str, int] = field(default_factory=dict)
    retained: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TorchStep:
        return cls(
            **{
                **data,
                "peak_by_role": _roles(data.get("peak_by_role")),
                "end_by_role": _roles(data.get("end_by_role")),
                "retained": {str(k): int(v) for k, v in dict(data.get("retained") or {}).items()},
            }
        )


@dataclass
class TorchOom:
    """What was held when torch raised an out-of-memory error: ``requested_bytes`` as the message
    gives it (exact on CPU, two decimals of a unit on CUDA), the roles then and the largest
    storages. ``where``: the module whose forward failed, ``backward``, the operator (full mode)
    or ``uncaught`` (seen only as the program ended)."""

    at_seconds: float
    message: str
    requested_bytes: int | None = None
    device: str = ""
    where: str = ""
    step: int = 0
    phase: str = ""
    total_bytes: int = 0
    by_role: dict[str, int] = field(default_factory=dict)
    tensors: list[TorchTensor] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TorchOom:
        return cls(
            **{
                **data,
                "by_role": _roles(data.get("by_role")),
                "tensors": [TorchTensor.from_dict(t) for t in data.get("tensors", [])],
            }
        )


@dataclass
class TorchMemory:
    """Tensor memory of the process that held the most (``pid``); ``processes`` says how many
        processes of the run imported torch. ``peak_by_role``: the composition at the moment of the
        largest tensor total (``peak_bytes``); ``max_by_role``: each role's own maximum over the run;
        ``end_by_role``: what was left at the end. ``mode`` is ``summary`` or ``full``
        (docs/torch.md says what each sees). ``steps`` lists the steps followed tensor by tensor, each
    with its ``index`` among all ``steps_total`` steps."""

    mode: str
    pid: int
    peak_bytes: int
    peak_at_seconds: float | None = None
    peak_by_role: dict[str, int] = field(default_factory=dict)
    max_by_role: dict[str, int] = field(default_factory=dict)
    end_by_role: dict[str, int] = field(default_factory=dict)
    modules: list[TorchModule] = field(default_factory=list)
    steps: list[TorchStep] = field(default_factory=list)
    steps_dropped: int = 0
    # steps between those followed tensor by tensor (summary mode): counted, not in ``steps``
    steps_untracked: int = 0
    devices: list[str] = field(default_factory=list)
    oom: TorchOom | None = None
    oom_count: int = 0
    processes: int = 1
    notes: list[str] = field(default_factory=list)

    @property
    def steps_total(self) -> int:
        return len(self.steps) + self.steps_dropped + self.steps_untracked

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TorchMemory:
        oom = data.get("oom")
        return cls(
            **{
                **data,
                "peak_by_role": _roles(data.get("peak_by_role")),
                "max_by_role": _roles(data.get("max_by_role")),
                "end_by_role": _roles(data.get("end_by_role")),
                "modules": [TorchModule(**m) for m in data.get("modules", [])],
                "steps": [TorchStep.from_dict(s) for s in data.get("steps", [])],
                "devices": [str(d) for d in data.get("devices", [])],
                "oom": TorchOom.from_dict(oom) if oom is not None else None,
                "notes": [str(n) for n in data.get("notes", [])],
            }
        )


def read_part(data: dict[str, Any]) -> TorchMemory:
    """The section's part of a profile (``Profile.torch``) from its dictionary: the registry's
    "record"."""
    return TorchMemory.from_dict(data)
