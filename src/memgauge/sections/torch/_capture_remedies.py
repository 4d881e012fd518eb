"""Memory remedies applied to a program's model without editing the program, for ``memgauge fit
--remedies``: each runs in a fresh process that the runner starts with ``MEMGAUGE_REMEDY`` set.

Applied once torch is imported (the finder of ``_capture`` calls ``apply_remedies_from_env``),
through torch's global module hooks: the first module called outside any other one that has child modules and
parameters is the model (a loss module called first has no children). At its first call:

- ``checkpoint``: each child holding parameters (a ``ModuleList``/``ModuleDict`` is looked into,
  having no forward of its own) gets its ``forward`` replaced on the instance by one that runs it
  under ``torch.utils.checkpoint.checkpoint(..., use_reentrant=False)`` while grad is enabled.
- ``autocast``: ``torch.autocast`` (bf16 on the CPU, fp16 on CUDA) entered around the model's
  forward (its pre hook) and left after it (its post hook, which runs on errors too).
- ``offload``: ``torch.autograd.graph.save_on_cpu`` around the model's forward. On the CPU it cannot
  save anything (torch returns a CPU tensor itself), so there it is not applied and the report says
  why.

What was hooked (module names, the dtype) is written as JSON to ``MEMGAUGE_REMEDY_REPORT`` at that
first call: the report lists exactly what changed in the program. Never raises into the program.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import weakref
from typing import Any

import torch
from torch.utils.checkpoint import checkpoint

from memgauge._env import ENV_REMEDY, ENV_REMEDY_REPORT, HOOKED_REMEDIES
from memgauge.sections.torch._capture_compat import hidden, model_of, quiet_compile_warning

_applied: Remedies | None = None


class Remedies:
    """The global hooks of one process and what they did (``report``)."""

    def __init__(self, names: tuple[str, ...], report_path: str) -> None:
        self.names = names
        self.report_path = report_path
        self.depth = 0
        self.model: weakref.ref[torch.nn.Module] | None = None
        self.contexts: list[contextlib.AbstractContextManager[Any]] = []
        self.entered: list[int] = []  # how many contexts each model call entered
        self.report: dict[str, Any] = {"remedies": list(names), "hooked": [], "not_applied": []}
        self.handles: list[Any] = []

    def install(self) -> None:
        modules = torch.nn.modules.module
        self.handles = [
            modules.register_module_forward_pre_hook(self.pre),
            modules.register_module_forward_hook(self.post, always_call=True),
        ]
        quiet_compile_warning()  # torch's warning about global hooks is not the program's

    def uninstall(self) -> None:
        for handle in self.handles:
            handle.remove()
        self.handles = []

    # -- choosing the model and hooking it once ---------------------------------------------------

    def pre(self, module: torch.nn.Module, args: object) -> None:
        # inside a module Dynamo compiles or torch.jit.trace records, the hooks keep out (Dynamo
        # failed on their state, as on the tracker's: sections/torch/_capture_compat.py); a compiled model
        # gets its remedies at the call of its OptimizedModule, outside the compiled region
        if hidden():
            return
        self.depth += 1
        if self.depth != 1:
            return
        if self.model is None and _is_model(module):
            self.model = weakref.ref(module)
            try:
                self._hook(module)
            except Exception as e:  # the program runs on as it is; the report says what failed
                self.report["not_applied"].append(f"hooking failed: {type(e).__name__}: {e}")
                self.names = ()
                self._write()
        if self.model is not None and self.model() is module:
            self._enter(module)

    def post(self, module: torch.nn.Module, args: object, output: object) -> None:
        if hidden():
            return
        self.depth -= 1
        if self.depth == 0 and self.model is not None and self.model() is module and self.entered:
            for _ in range(self.entered.pop()):
                self.contexts.pop().__exit__(None, None, None)

    def _hook(self, module: torch.nn.Module) -> None:
        model = model_of(module)  # a compiled model's blocks are those of the model it compiles
        device = _device_of(model)
        self.report["model"] = type(model).__name__
        self.report["device"] = device
        if "checkpoint" in self.names:
            wrapped = [name for name, child in _blocks(model) if _checkpoint_forward(child)]
            prefix = type(model).__name__
            self.report["hooked"] += [f"checkpoint: {prefix}.{name}" for name in wrapped]
            if not wrapped:
                self.report["not_applied"].append("checkpoint: the model has no child with parameters")
        if "autocast" in self.names:
            dtype = "float16" if device == "cuda" else "bfloat16"
            self.report["hooked"].append(f"autocast: {type(model).__name__}.forward ({device}, {dtype})")
        if "offload" in self.names:
            if device == "cuda":
                self.report["hooked"].append(f"offload: save_on_cpu around {type(model).__name__}.forward")
            else:
                self.report["not_applied"].append(
                    f"offload: the model is on the {device}; saved activations are already in host memory "
                    "(save_on_cpu returns a CPU tensor itself), so it cannot lower the peak"
                )
        self._write()

    def _enter(self, model: torch.nn.Module) -> None:
        device = self.report.get("device", "cpu")
        contexts: list[contextlib.AbstractContextManager[Any]] = []
        if "autocast" in self.names:
            dtype = torch.float16 if device == "cuda" else torch.bfloat16
            contexts.append(torch.autocast(device_type="cuda" if device == "cuda" else "cpu", dtype=dtype))
        if "offload" in self.names and device == "cuda" and torch.is_grad_enabled():
            contexts.append(torch.autograd.graph.save_on_cpu(pin_memory=True))
        for context in contexts:
            context.__enter__()
            self.contexts.append(context)
        self.entered.append(len(contexts))

    def _write(self) -> None:
        if not self.report_path:
            return
        with contextlib.suppress(OSError):
            tmp = self.report_path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(self.report, f)
            os.replace(tmp, self.report_path)


def _is_model(module: torch.nn.Module) -> bool:
    return next(module.children(), None) is not None and next(module.parameters(), None) is not None


def _device_of(model: torch.nn.Module) -> str:
    first = next(model.parameters(), None)
    return first.device.type if first is not None else "cpu"


def _blocks(model: torch.nn.Module) -> list[tuple[str, torch.nn.Module]]:
    """The model's children, a container's items in its place (it has no forward to wrap); only
    those holding parameters (checkpointing an activation function saves nothing)."""
    found: list[tuple[str, torch.nn.Module]] = []
    for name, child in model.named_children():
        if isinstance(child, (torch.nn.ModuleList, torch.nn.ModuleDict)):
            found += [(f"{name}.{sub}", item) for sub, item in child.named_children()]
        else:
            found.append((name, child))
    return [(name, child) for name, child in found if next(child.parameters(), None) is not None]


def _checkpoint_forward(child: torch.nn.Module) -> bool:
    original = child.forward

    @functools.wraps(original)
    def forward(*args: Any, **kwargs: Any) -> Any:
        if not torch.is_grad_enabled():
            return original(*args, **kwargs)
        return checkpoint(original, *args, use_reentrant=False, **kwargs)

    child.forward = forward
    return True


def requested(environ: dict[str, str] | os._Environ[str] | None = None) -> tuple[str, ...]:
    """The hooked remedies ``MEMGAUGE_REMEDY`` asks for (comma-separated; unknown names ignored)."""
    value = (environ if environ is not None else os.environ).get(ENV_REMEDY, "")
    return tuple(name for name in value.split(",") if name in HOOKED_REMEDIES)


def apply_remedies_from_env() -> Remedies | None:
    """Install the hooks ``MEMGAUGE_REMEDY`` asks for, once per process; None when it asks for none."""
    global _applied
    names = requested()
    if not names or _applied is not None:
        return _applied
    try:
        remedies = Remedies(names, os.environ.get(ENV_REMEDY_REPORT, ""))
        remedies.install()
    except Exception:  # a torch we cannot hook runs as it is; the missing report says so
        return None
    _applied = remedies
    return remedies
