"""Live torch tensors, from inside the program: ``from memgauge import torch as mgt``.

``mgt.tensors()`` lists what this process holds, one row per storage (a view adds nothing, a slice
keeps its base), with the tensors that only autograd holds (saved for backward) included once
tracking runs: under ``memgauge run`` from the program's ``import torch``, otherwise from the first
``mgt.tensors()``. ``mgt.diff(before, after)`` prints what appeared and disappeared, in the table
layout of Pytorch-Memory-Utils' ``gpu_mem_track``::

    before = mgt.tensors()
    loss = model(x).sum()
    print(mgt.diff(before, mgt.tensors()))

memgauge keeps no tensor alive: it refers to storages weakly. Importing this module imports
nothing from torch; ``tensors()`` needs torch to be importable.
"""

from __future__ import annotations

from dataclasses import dataclass

from memgauge._units import format_bytes
from memgauge.sections.torch import TensorDiff, TorchTensor, diff_tensors, live_tensors
from memgauge.sections.training import step

__all__ = ["Snapshot", "TensorDiff", "diff", "step", "tensors"]


@dataclass(frozen=True)
class Snapshot:
    """The live storages at one moment, largest first."""

    tensors: tuple[TorchTensor, ...]

    @property
    def total_bytes(self) -> int:
        return sum(t.bytes for t in self.tensors)

    def __len__(self) -> int:
        return len(self.tensors)

    def __str__(self) -> str:
        lines = [f"{len(self.tensors)} storages, {format_bytes(self.total_bytes)}"]
        for t in self.tensors:
            lines.append(_row(" ", 1, t.shape, t.bytes, (t.dtype, t.device, t.role, t.name, t.line)))
        return "\n".join(lines)


def tensors() -> Snapshot:
    """What this process holds in torch tensors now (see the module's docstring)."""
    rows = live_tensors()
    return Snapshot(tuple(TorchTensor.from_dict(row) for row in rows))


class Diff:
    """``mgt.diff``'s result: ``print`` it for the table, or read ``result`` (the analysis)."""

    def __init__(self, result: TensorDiff) -> None:
        self.result = result

    def __str__(self) -> str:
        r = self.result
        lines = [
            _row(g.sign, g.count, list(g.shape), g.bytes_each, (g.dtype, g.device, g.role, g.name, g.line))
            for g in r.groups
        ]
        lines.append(
            f"appeared {format_bytes(r.added_bytes)}, disappeared {format_bytes(r.removed_bytes)}, "
            f"net {format_bytes(r.added_bytes - r.removed_bytes, signed=True)}"
        )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<memgauge.torch.Diff +{self.result.added_bytes} -{self.result.removed_bytes} bytes>"


def diff(before: Snapshot, after: Snapshot) -> Diff:
    """What appeared (``+``) and disappeared (``-``) between two snapshots."""
    return Diff(diff_tensors(list(before.tensors), list(after.tensors)))


def _row(sign: str, count: int, shape: list[int], nbytes: int, rest: tuple[str, ...]) -> str:
    """``+ | 2 * Size:(64, 512) | Memory: 256 KiB | float32 | cpu | role | name | line``: the
    columns of gpu_mem_track, then what holds the storage and where it was made."""
    size = "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
    memory = format_bytes(nbytes * count)
    return " | ".join([sign, f"{count} * Size:{size:<18}", f"Memory: {memory:>10}", *[p for p in rest if p]])
