"""Keeping the tracker's hooks out of what compilers and tracers see (docs/frameworks.md).

torch's global module hooks run inside every module call, also while Dynamo traces one
(``torch.compile``): a hook that reads or mutates Python state there is traced with the module, and
Dynamo failed on it (``UnspecializedNNModuleVariable(...) is already tracked for mutation``). The
hooks therefore return at once while Dynamo compiles (``hidden``, which Dynamo folds to a
constant, so the traced graph holds nothing of them): a compiled region is measured from outside it,
at the ``OptimizedModule`` call that runs it (its parameters, the tensors its compiled backward
saves, its time and its FLOPs), never from within.

``OptimizedModule.__call__`` warns whenever any global module hook exists, memgauge's too: a warning
the program would not print without memgauge. ``quiet_compile_warning`` makes the question it asks
(``torch.nn.modules.module._has_any_global_hook``, which nothing else in torch calls) leave out
memgauge's own hooks, so a program's own global hooks still get torch's warning.

A closure-driven optimizer step runs the model inside the step (``closure_step``).
"""

from __future__ import annotations

from typing import Any

import torch

_compiling = torch.compiler.is_compiling
_tracing = torch._C._is_tracing


def hidden() -> bool:
    """Whether the module call now running is being compiled (Dynamo) or traced (``torch.jit.trace``,
    which records every operator run, the saved-tensor hook's ``detach`` too, and whose check then
    found the graphs of two traces different): the hooks then keep out of it."""
    return bool(_compiling() or _tracing())


_OWN = "memgauge."


def _foreign(table: Any) -> bool:
    return any(not str(getattr(hook, "__module__", "") or "").startswith(_OWN) for hook in table.values())


def others_hooked() -> bool:
    """Whether a global module hook that is not memgauge's is registered."""
    m = torch.nn.modules.module
    tables = (
        "_global_backward_pre_hooks",
        "_global_backward_hooks",
        "_global_forward_pre_hooks",
        "_global_forward_hooks",
    )
    return any(_foreign(getattr(m, name, {})) for name in tables)


def quiet_compile_warning() -> None:
    """Idempotent; left as it is on a torch without that function (the warning then stays)."""
    m = torch.nn.modules.module
    if getattr(m, "_has_any_global_hook", None) not in (None, others_hooked):
        m._has_any_global_hook = others_hooked


def model_of(module: torch.nn.Module) -> torch.nn.Module:
    """The module a compiled wrapper runs (``torch.compile(model)``'s ``_orig_mod``), so that
    parameters are named as the program's model names them; else the module itself."""
    inner = getattr(module, "_orig_mod", None)
    return inner if isinstance(inner, torch.nn.Module) else module


def closure_step(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether an optimizer step (its pre hook's ``args``, the optimizer first, and ``kwargs``) was
    given a closure: LBFGS and Lightning's automatic optimisation run forward and backward inside
    ``optimizer.step(closure)``, so the FLOP count of a step goes on to its end."""
    return callable(kwargs.get("closure", args[1] if len(args) > 1 else None))
