"""Counting torch's copies between devices (``_capture_copies`` keeps the bytes): the hooks.

``Tensor.to``, ``Tensor.cuda``, ``Tensor.cpu`` and ``Tensor.copy_`` are wrapped at the Python
level, in both torch modes: a call is compared after it ran (the result's device against the
tensor's, or ``copy_``'s source against its destination), so every way of naming a device
(``.to("cuda")``, ``.to(other)``, ``.to(device, dtype)``, ``non_blocking``, pinned or not) is
handled by torch itself, and a call that copied nothing across devices (same device, a dtype change,
a no-op ``to`` returning the tensor itself) costs one Python call and an identity or device check.
The bytes counted are the destination's (``numel x element_size``: what landed on the other
device). The line is the program's innermost frame outside torch and memgauge (the tracker's
``line_here``), looked up only for a copy that crossed.

Not seen: copies made inside C++ (``torch.tensor(data, device="cuda")``, ``torch.as_tensor(...,
device=...)``, an operator that moves its inputs itself), which never pass these methods. A
dispatch mode would see those, at the price of every operator going through Python (the full
mode's cost, docs/torch.md): the methods are where programs move batches and models.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch

from memgauge.sections.training._capture_copies import Copies

# names wrapped on torch.Tensor: each returns a tensor that may live on another device
_RESULT_METHODS = ("to", "cuda", "cpu")


def wrap_copies(
    copies: Callable[[], Copies | None], line_of: Callable[[], str], wrapped: list[tuple[Any, str, Any]]
) -> None:
    """Wrap torch's copy methods so that each copy across devices is counted in ``copies()`` (the
    process's loop's, looked up at each copy that crossed: a forked child counts its own; None:
    not counted);
    ``line_of()`` names the program's line; each ``(owner, name, original)`` replaced is appended
    to ``wrapped`` (to put it back)."""
    tensor = torch.Tensor
    for name in _RESULT_METHODS:
        original = getattr(tensor, name)
        wrapped.append((tensor, name, original))
        setattr(tensor, name, _result_wrapper(original, copies, line_of))
    original_copy = tensor.copy_
    wrapped.append((tensor, "copy_", original_copy))
    tensor.copy_ = _copy_wrapper(original_copy, copies, line_of)  # type: ignore[method-assign]


def _count(
    copies: Callable[[], Copies | None],
    source: str,
    destination: str,
    nbytes: int,
    line_of: Callable[[], str],
) -> None:
    found = copies()
    if found is not None:
        found.add(source, destination, nbytes, line_of())


def _nbytes(t: torch.Tensor) -> int:
    return int(t.numel()) * int(t.element_size())


def _result_wrapper(original: Any, copies: Callable[[], Copies | None], line_of: Callable[[], str]) -> Any:
    @functools.wraps(original)
    def moved(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        out = original(self, *args, **kwargs)
        if out is not self and isinstance(out, torch.Tensor):
            source, destination = self.device, out.device
            if source != destination:
                _count(copies, str(source), str(destination), _nbytes(out), line_of)
        return out

    return moved


def _copy_wrapper(original: Any, copies: Callable[[], Copies | None], line_of: Callable[[], str]) -> Any:
    @functools.wraps(original)
    def copied(self: torch.Tensor, src: Any, *args: Any, **kwargs: Any) -> Any:
        out = original(self, src, *args, **kwargs)
        if isinstance(src, torch.Tensor):
            source, destination = src.device, self.device
            if source != destination:
                _count(copies, str(source), str(destination), _nbytes(self), line_of)
        return out

    return copied
