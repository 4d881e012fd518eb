"""The torch tracker's hook points: what the parts that plug into it (full mode's dispatch mode,
the Keras connection) may call on the object that holds the tracker's connection to torch, and
how the sections that build on torch plug in (``plug_sections``: their "torch" parts).

They take this protocol rather than ``_capture_hooks.Hooks`` itself, which imports them: so the
modules that offer the points and those that use them form no circle, type-only imports counted.
"""

from __future__ import annotations

from typing import Protocol

TYPE_CHECKING = False
if TYPE_CHECKING:
    import weakref

    import torch

    from memgauge.sections.torch._capture_track import Tracker


def plug_sections(tracker: Tracker, stage: str, *args: object) -> None:
    """Each section's "torch" part that has ``stage`` ("made": the tracker exists, before it
    connects to torch; "connected": its hooks are in), in the sections' order: the GPU section
    gives the tracker its allocator log and caps torch's reserve, the training section follows
    the loop's data and FLOPs."""
    from memgauge.sections import ordered

    for spec in ordered():
        if spec.name != "torch" and (part := spec.part("torch")) is not None:
            call = getattr(part, stage, None)
            if call is not None:
                call(tracker, *args)


class HookPoints(Protocol):
    tracker: Tracker
    # the optimizers' state counted, weakly, by id
    states: dict[int, weakref.ref[torch.Tensor]]

    def count(
        self,
        t: torch.Tensor,
        role: int,
        *,
        module: str | None = None,
        name: str = "",
        line: str | None = None,
    ) -> None: ...

    def count_outputs(self, output: object, role: int) -> None: ...

    def parameter(self, p: torch.Tensor, name: str, module: str) -> None: ...

    def gradient(self, p: torch.Tensor, grad: torch.Tensor) -> None: ...

    def oom(self, exception: BaseException, where: str) -> None: ...
