"""The full torch mode's dispatch mode (``_capture_hooks``): every operator's outputs counted,
as temporaries while a step runs and as ``other`` outside; an out-of-memory error seen where an
operator raises it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from torch.utils._python_dispatch import TorchDispatchMode

from memgauge.sections.torch._capture_oom import is_oom
from memgauge.sections.torch._capture_track import OTHER, TEMPORARIES

if TYPE_CHECKING:
    from memgauge.sections.torch._capture_points import HookPoints


def full_mode(hooks: HookPoints) -> TorchDispatchMode:
    tracker = hooks.tracker

    class CountEveryOutput(TorchDispatchMode):  # type: ignore[no-untyped-call]
        def __torch_dispatch__(
            self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
        ) -> Any:
            try:
                out = func(*args, **(kwargs or {}))
            except RuntimeError as e:
                if is_oom(e):
                    hooks.oom(e, str(func))
                raise
            hooks.count_outputs(out, TEMPORARIES if tracker.phase else OTHER)
            return out

    return CountEveryOutput()  # type: ignore[no-untyped-call]
