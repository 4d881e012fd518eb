"""Keras 3 on the torch backend (docs/frameworks.md): its train steps are steps, its optimizer's
variables are optimizer state.

Keras's layers are torch modules (the module hooks see them, their weights are torch parameters),
but its optimizers are its own: ``model.fit`` never calls a ``torch.optim`` step, so no step ended
and Adam's moments were in no role. ``connect`` wraps ``BaseOptimizer.apply`` (every Keras
optimizer's update, called once a train step after backward) the way torch's optimizer step hooks
are used: before it, the FLOP count ends and the parameters' gradients are counted; after it,
``optimizer.variables`` (the moments, the iteration count, the learning rate) count as optimizer
state and the step ends. It is connected at the first call of a Keras model (``Hooks.scan``), when
Keras is loaded; an update nested in another (a loss-scale optimizer's inner one) is one step, and
one run while Dynamo compiles (``jit_compile=True``) is left alone (``_capture_compat.hidden``).
"""

from __future__ import annotations

import functools
import sys
import weakref
from typing import TYPE_CHECKING, Any

from memgauge.sections.torch._capture_compat import hidden
from memgauge.sections.torch._capture_track import OPTIMIZER_STATE

if TYPE_CHECKING:
    from memgauge.sections.torch._capture_points import HookPoints

_wrapped: list[tuple[Any, Any]] = []  # (BaseOptimizer, its own apply)


def is_keras(module: object) -> bool:
    return str(type(module).__module__).startswith("keras.")


def connect(hooks: HookPoints) -> None:
    """Wrap Keras's optimizer update (once per process; nothing where Keras is not loaded)."""
    base = sys.modules.get("keras.src.optimizers.base_optimizer")
    cls = getattr(base, "BaseOptimizer", None)
    if cls is None or _wrapped:
        return
    original = cls.apply
    depth = [0]

    @functools.wraps(original)
    def apply(self: Any, grads: Any, trainable_variables: Any = None) -> Any:
        if depth[0] or hidden():
            return original(self, grads, trainable_variables)
        depth[0] += 1
        try:
            before(hooks, self, trainable_variables)
            out = original(self, grads, trainable_variables)
        finally:
            depth[0] -= 1
        after(hooks, self)
        return out

    _wrapped.append((cls, original))
    cls.apply = apply


def disconnect() -> None:
    while _wrapped:
        cls, original = _wrapped.pop()
        cls.apply = original


def _values(variables: Any) -> list[Any]:
    import torch

    out = []
    for v in variables or ():
        value = getattr(v, "value", v)
        if isinstance(value, torch.Tensor):
            out.append(value)
    return out


def before(hooks: HookPoints, optimizer: Any, variables: Any) -> None:
    tracker = hooks.tracker
    if tracker.before_optimizer is not None:
        tracker.before_optimizer()
    if not tracker.tracking:
        tracker.active = True
        return
    tracker.enter("optimizer")
    entries = tracker.entries
    for p in _values(variables if variables is not None else getattr(optimizer, "_trainable_variables", ())):
        if id(p.untyped_storage()) not in entries:
            hooks.parameter(p, "", "")
        if p.grad is not None:
            hooks.gradient(p, p.grad)


def after(hooks: HookPoints, optimizer: Any) -> None:
    tracker = hooks.tracker
    if tracker.tracking:
        seen = hooks.states
        for v in getattr(optimizer, "variables", ()):
            value = getattr(v, "value", None)
            if value is None or not hasattr(value, "untyped_storage"):
                continue
            ref = seen.get(id(value))
            if ref is not None and ref() is value:
                continue  # counted at an earlier step: updated in place
            hooks.count(value, OPTIMIZER_STATE, module="", name=str(getattr(v, "path", "")), line="")
            seen[id(value)] = weakref.ref(value, functools.partial(seen.pop, id(value)))
    tracker.end_step("optimizer")
