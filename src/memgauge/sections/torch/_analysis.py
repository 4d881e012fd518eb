"""Torch tensor memory as rows: roles at the peak and per step, modules at the peak, a leak across
steps, two runs side by side, and the difference between two live-tensor snapshots.

Pure functions over ``Profile.torch`` (and lists of ``TorchTensor``): every renderer shows these
numbers, none computes its own.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from memgauge.model import Profile
from memgauge.sections.torch._record import TORCH_ROLES, TorchMemory, TorchTensor

# a step leak: the tensor total at step ends grows in at least this share of the steps looked at
_RISING_SHARE = 0.8
_MIN_STEPS = 4


@dataclass(frozen=True)
class RoleRow:
    """One role: its bytes at the moment of the largest tensor total, its share of that total,
    its own maximum over the run and what was left at the end."""

    role: str
    at_peak_bytes: int
    share: float
    max_bytes: int
    end_bytes: int


@dataclass(frozen=True)
class ModuleRow:
    """A module at the peak: its bytes in all roles, and by role (the roles it holds, largest first)."""

    module: str
    bytes: int
    by_role: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class StepRow:
    index: int
    seconds: float
    peak_bytes: int
    end_bytes: int
    forward_seconds: float
    backward_seconds: float
    optimizer_seconds: float
    peak_by_role: tuple[int, ...]  # in TORCH_ROLES order


@dataclass(frozen=True)
class StepLeak:
    """Tensor memory that grows from step to step: ``bytes_per_step`` over steps ``first_step`` to
    ``last_step``, held mostly by tensors created at ``line`` (``line_bytes`` of them at the last
    step), in ``roles`` (the roles that grew)."""

    bytes_per_step: float
    first_step: int
    last_step: int
    line: str
    line_bytes: int
    roles: tuple[str, ...]


@dataclass(frozen=True)
class TorchSummary:
    mode: str
    peak_bytes: int
    roles: tuple[RoleRow, ...]
    modules: tuple[ModuleRow, ...]
    steps: int
    median_step_seconds: float | None
    leak: StepLeak | None


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def torch_roles(torch: TorchMemory) -> tuple[RoleRow, ...]:
    peak = torch.peak_bytes
    return tuple(
        RoleRow(
            role,
            torch.peak_by_role.get(role, 0),
            torch.peak_by_role.get(role, 0) / peak if peak else 0.0,
            torch.max_by_role.get(role, 0),
            torch.end_by_role.get(role, 0),
        )
        for role in TORCH_ROLES
    )


def torch_modules(torch: TorchMemory, *, top: int = 10) -> tuple[ModuleRow, ...]:
    """The modules holding the most at the peak, all roles together."""
    by_module: dict[str, dict[str, int]] = {}
    for row in torch.modules:
        roles = by_module.setdefault(row.module, {})
        roles[row.role] = roles.get(row.role, 0) + row.bytes
    rows = [
        ModuleRow(name, sum(roles.values()), tuple(sorted(roles.items(), key=lambda kv: -kv[1])))
        for name, roles in by_module.items()
    ]
    rows.sort(key=lambda r: (-r.bytes, r.module))
    return tuple(rows[:top])


def torch_steps(torch: TorchMemory) -> tuple[StepRow, ...]:
    return tuple(
        StepRow(
            s.index,
            s.seconds,
            s.peak_bytes,
            s.end_bytes,
            s.forward_seconds,
            s.backward_seconds,
            s.optimizer_seconds,
            tuple(s.peak_by_role.get(role, 0) for role in TORCH_ROLES),
        )
        for s in torch.steps
    )


def torch_step_leak(torch: TorchMemory, *, min_bytes_per_step: int = 1) -> StepLeak | None:
    """Growth of the tensor total at step ends, after the first step (which creates gradients and
    optimizer state once). Named with the creating line whose retained bytes grew the most."""
    steps = torch.steps[1:]
    if len(steps) < _MIN_STEPS:
        return None
    ends = [s.end_bytes for s in steps]
    rises = sum(1 for a, b in itertools.pairwise(ends) if b > a)
    if rises < _RISING_SHARE * (len(ends) - 1) or ends[-1] <= ends[0]:
        return None
    # the listed steps may be a sample of all (``steps_untracked``), and what an untracked step kept
    # was never counted: the rate is the growth from one step to the next where both are listed
    pairs = [(a, b) for a, b in itertools.pairwise(steps) if b.index == a.index + 1]
    if pairs:
        per_step = sum(b.end_bytes - a.end_bytes for a, b in pairs) / len(pairs)
    else:
        per_step = (ends[-1] - ends[0]) / max(1, steps[-1].index - steps[0].index)
    if per_step < min_bytes_per_step:
        return None
    first, last = steps[0], steps[-1]
    growth = {line: n - first.retained.get(line, 0) for line, n in last.retained.items()}
    line = max(growth, key=lambda k: growth[k]) if growth else ""
    roles = tuple(
        role for role in TORCH_ROLES if last.end_by_role.get(role, 0) > first.end_by_role.get(role, 0)
    )
    return StepLeak(per_step, first.index, last.index, line, last.retained.get(line, 0), roles)


def torch_summary(profile: Profile, *, top_modules: int = 10) -> TorchSummary | None:
    """Everything a report shows about torch; None for a profile without torch."""
    torch = profile.torch
    if torch is None:
        return None
    return TorchSummary(
        torch.mode,
        torch.peak_bytes,
        torch_roles(torch),
        torch_modules(torch, top=top_modules),
        torch.steps_total,
        step_median(profile),
        torch_step_leak(torch),
    )


def step_median(profile: Profile) -> float | None:
    """The median step time the report gives everywhere: the throughput section's (every steady
    step timed, docs/training.md) where there is one, else the followed steps' (the tracker's)."""
    training = profile.training
    if training is not None and training.step_seconds is not None:
        return training.step_seconds.median
    return _median([s.seconds for s in profile.torch.steps]) if profile.torch is not None else None


@dataclass(frozen=True)
class RoleComparison:
    """One role at each run's peak (None: that run has no torch figures) and the change."""

    role: str
    bytes: tuple[int | None, ...]
    delta: int | None


def compare_torch_roles(profiles: list[Profile]) -> tuple[RoleComparison, ...]:
    """The roles at the peak, side by side; empty when no profile has torch figures. The change is
    last minus first, where both have figures."""
    if all(p.torch is None for p in profiles):
        return ()
    rows = []
    for role in (*TORCH_ROLES, "total"):
        values = tuple(
            None
            if p.torch is None
            else (p.torch.peak_bytes if role == "total" else p.torch.peak_by_role.get(role, 0))
            for p in profiles
        )
        first, last = values[0], values[-1]
        rows.append(RoleComparison(role, values, None if first is None or last is None else last - first))
    return tuple(rows)


@dataclass(frozen=True)
class TensorGroup:
    """Tensors alike (shape, dtype, device, name, line) that appeared or disappeared."""

    sign: str  # "+" appeared, "-" disappeared
    count: int
    shape: tuple[int, ...]
    dtype: str
    device: str
    bytes_each: int
    role: str
    name: str
    line: str


@dataclass(frozen=True)
class TensorDiff:
    added_bytes: int
    removed_bytes: int
    groups: tuple[TensorGroup, ...] = field(default_factory=tuple)


def diff_tensors(before: list[TorchTensor], after: list[TorchTensor]) -> TensorDiff:
    """What appeared and what disappeared between two snapshots of live storages (matched by the
    tracker's storage id, which no other storage ever takes)."""
    old = {t.id: t for t in before}
    new = {t.id: t for t in after}
    groups: dict[tuple[object, ...], list[TorchTensor]] = {}
    for sign, tensors, other in (("+", after, old), ("-", before, new)):
        for t in tensors:
            if t.id in other:
                continue
            key = (sign, tuple(t.shape), t.dtype, t.device, t.bytes, t.role, t.name, t.line)
            groups.setdefault(key, []).append(t)
    rows = [
        TensorGroup(
            str(k[0]),
            len(v),
            tuple(v[0].shape),
            v[0].dtype,
            v[0].device,
            v[0].bytes,
            v[0].role,
            v[0].name,
            v[0].line,
        )
        for k, v in groups.items()
    ]
    rows.sort(key=lambda g: (g.sign != "+", -g.count * g.bytes_each, g.line))
    added = sum(t.bytes for t in after if t.id not in old)
    removed = sum(t.bytes for t in before if t.id not in new)
    return TensorDiff(added, removed, tuple(rows))
