"""Connecting the tracker (``_capture_track``) to a loaded torch: where each role is seen.

- **Modules**: torch's global forward pre/post hooks keep the stack of modules running forward
  (named from the outermost one's ``named_modules``, scanned once, which also counts its
  parameters and buffers); the post hook runs even when forward raises (``always_call``): an
  out-of-memory error in a forward is seen there. Summary mode counts module outputs as
  temporaries. Both keep out of what Dynamo or ``torch.jit.trace`` records (``_capture_compat``).
- **Activations**: saved-tensor hooks, pushed for the outermost module's forward only (so
  ``torch.func`` transforms, which refuse saved-tensor hooks, still work outside modules): the pack
  hook counts the storage of each tensor autograd saves, and returns it detached (same storage).
- **Gradients**: each parameter's post-accumulate-grad hook, and the optimizer's parameters' ``.grad``
  before it steps. **Optimizer state**: ``optimizer.state`` after each step. **Steps**: torch's
  global optimizer step hooks (the pre hook also ends the FLOP count, ``tracker.before_optimizer``);
  ``torch.autograd.backward`` wrapped to tell backward from forward; else ``memgauge.step()``.
- **Sampled steps** (summary mode, ``_capture_sampling``): between the steps followed tensor by
  tensor the module and gradient hooks are off (torch's fast call path) and the optimizer hooks
  only mark the step; a step's end reads the process's memory level now and then, to decide.
- **full** mode adds a dispatch mode (on the thread that imported torch) that counts every
  operator's outputs: temporaries while a step runs, ``other`` outside.
"""

from __future__ import annotations

import atexit
import functools
import os
import sys
import weakref
from typing import Any

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook
from torch.utils._python_dispatch import TorchDispatchMode

from memgauge.capture import TORCH, record_writer
from memgauge.sections.torch._capture_compat import closure_step, hidden, model_of, quiet_compile_warning
from memgauge.sections.torch._capture_keras import connect as keras_connect
from memgauge.sections.torch._capture_keras import disconnect as keras_disconnect
from memgauge.sections.torch._capture_keras import is_keras
from memgauge.sections.torch._capture_oom import is_oom
from memgauge.sections.torch._capture_points import plug_sections
from memgauge.sections.torch._capture_sampling import ResidentReader, StepSampling
from memgauge.sections.torch._capture_track import (
    ACTIVATIONS,
    GRADIENTS,
    OPTIMIZER_STATE,
    OTHER,
    PARAMETERS,
    TEMPORARIES,
    Tracker,
)


class Hooks:
    """Holds what connects one tracker to torch, and the handles to take it off again."""

    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker
        self.names: weakref.WeakKeyDictionary[torch.nn.Module, str] = weakref.WeakKeyDictionary()
        self.hooked: dict[int, weakref.ref[torch.Tensor]] = {}  # the parameters seen, weakly
        self.owners: dict[int, tuple[str, str]] = {}  # of each named parameter: (module, name)
        self.states: dict[int, weakref.ref[torch.Tensor]] = {}  # the optimizers' state counted
        self.backward_line = ""  # the program's line that called the backward running
        # id -> its gradient hook's handle, held only while steps are followed (as the module hooks)
        self.grad_handles: dict[int, Any] = {}
        self.pushed: list[bool] = []
        self.handles: list[Any] = []
        self.mode: TorchDispatchMode | None = None
        self._backward: Any = None  # torch's, and memgauge's wrapper of it
        self._wrapped_backward: Any = None
        self.module_handles: list[Any] = []
        self.sampling = StepSampling.from_env() if tracker.mode == "summary" else StepSampling(every=1)
        self.resident = ResidentReader()

    # -- storages --------------------------------------------------------------------------------

    def count(
        self,
        t: torch.Tensor,
        role: int,
        *,
        module: str | None = None,
        name: str = "",
        line: str | None = None,
    ) -> None:
        try:
            storage = t.untyped_storage()
        except (RuntimeError, NotImplementedError, TypeError):
            return  # sparse, meta-only or otherwise storage-less tensors hold nothing we can count
        entry = self.tracker.entries.get(id(storage))
        if entry is not None and entry.role <= role and (not name or entry.name):
            return  # the common case, kept short: already counted at this role or above
        device = str(t.device)
        if device == "meta":
            return
        base = t._base if t._base is not None else t
        self.tracker.track(
            storage, storage.nbytes(), role, module=module, name=name, shape=tuple(base.shape),
            dtype=str(t.dtype).replace("torch.", ""), device=device, line=line,
        )  # fmt: skip

    def count_outputs(self, output: object, role: int) -> None:
        if isinstance(output, torch.Tensor):
            self.count(output, role)
        elif isinstance(output, (tuple, list)):
            for item in output:
                if isinstance(item, torch.Tensor):
                    self.count(item, role)

    def parameter(self, p: torch.Tensor, name: str, module: str) -> None:
        self.count(p, PARAMETERS, module=module, name=name, line="")
        key = id(p)
        if not (p.requires_grad and p.is_leaf):
            return
        if name:
            self.owners[key] = (module, name)
        if key not in self.hooked:

            def gone(_ref: object) -> None:
                self.hooked.pop(key, None)
                self.grad_handles.pop(key, None)
                self.owners.pop(key, None)

            self.hooked[key] = weakref.ref(p, gone)
            if self.tracker.tracking:
                self._hook_grad(key, p)

    def _hook_grad(self, key: int, p: torch.Tensor) -> None:
        if key not in self.grad_handles:
            self.grad_handles[key] = p.register_post_accumulate_grad_hook(self.grad_ready)  # type: ignore[no-untyped-call]

    def grad_ready(self, p: torch.Tensor) -> None:
        if self.tracker.tracking and p.grad is not None:
            self.gradient(p, p.grad)

    def gradient(self, p: torch.Tensor, grad: torch.Tensor) -> None:
        module, name = self.owners.get(id(p), ("", ""))
        self.count(grad, GRADIENTS, module=module, name=name and name + ".grad", line=self.backward_line)

    # -- modules ---------------------------------------------------------------------------------

    def scan(self, called: torch.nn.Module) -> None:
        root = model_of(called)  # a compiled model is named as the program's own
        if is_keras(root):
            keras_connect(self)  # its optimizer is no torch.optim (docs/frameworks.md)
        prefix = type(root).__name__
        self.names[called] = prefix
        for qualified, sub in root.named_modules():
            self.names[sub] = f"{prefix}.{qualified}" if qualified else prefix
        for qualified, p in root.named_parameters():
            owner = qualified.rpartition(".")[0]
            self.parameter(p, f"{prefix}.{qualified}", f"{prefix}.{owner}" if owner else prefix)
        for qualified, b in root.named_buffers():
            owner = qualified.rpartition(".")[0]
            self.count(
                b, OTHER, module=f"{prefix}.{owner}" if owner else prefix, name=f"{prefix}.{qualified}"
            )

    def forward_pre(self, module: torch.nn.Module, args: object) -> None:
        if hidden():  # compiled or traced: nothing of memgauge in the graph
            return
        stack = self.tracker.modules
        if not stack:
            if module not in self.names:
                self.scan(module)
            if self.tracker.phase not in ("forward", "backward"):
                self.tracker.enter("forward")
            # not in backward: a forward run there is a checkpoint's recomputation, whose own
            # saved-tensor hooks must stay on top (ours would hide what it saves, and it fails)
            push = (
                torch.is_grad_enabled()
                and self.tracker.phase != "backward"
                and torch._C._autograd._saved_tensors_hooks_get_disabled_error_message() is None
            )
            if push:
                torch._C._autograd._push_saved_tensors_default_hooks(self.pack, _unpack)
            self.pushed.append(push)
        stack.append(self.names.get(module) or type(module).__name__)

    def forward_post(self, module: torch.nn.Module, args: object, output: object) -> None:
        if hidden():
            return
        stack = self.tracker.modules
        failed = sys.exc_info()[1]
        if failed is not None:
            if is_oom(failed):
                self.oom(failed, f"forward of {stack[-1] if stack else type(module).__name__}")
        elif self.mode is None:
            self.count_outputs(output, TEMPORARIES)
        if stack:
            stack.pop()
        if not stack and self.pushed and self.pushed.pop():
            torch._C._autograd._pop_saved_tensors_default_hooks()

    def pack(self, t: torch.Tensor) -> torch.Tensor:
        self.count(t, ACTIVATIONS)
        # detached (same storage, no copy): an op's saved output packed as itself would hold its own
        # grad_fn, a cycle through C++ that the garbage collector cannot see, and a forward never
        # followed by backward (evaluation with grad enabled) would leak every output it saved.
        # Autograd puts the grad_fn back at unpack, so double backward is unchanged.
        return t.detach()

    # -- steps -----------------------------------------------------------------------------------

    def step_pre(self, optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        if self.tracker.before_optimizer is not None and not closure_step(args, kwargs):
            self.tracker.before_optimizer()
        if not self.tracker.tracking:
            self.tracker.active = True  # a step's phases are timed only where it is followed
            return
        self.tracker.enter("optimizer")
        entries = self.tracker.entries
        for group in optimizer.param_groups:
            for p in group["params"]:
                if id(p.untyped_storage()) not in entries:
                    self.parameter(p, "", "")
                if p.grad is not None:
                    self.gradient(p, p.grad)

    def step_post(self, optimizer: torch.optim.Optimizer, args: object, kwargs: object) -> None:
        seen = self.states
        for p, state in optimizer.state.items() if self.tracker.tracking else ():
            if not isinstance(p, torch.Tensor) or not isinstance(state, dict):
                continue
            for key, value in state.items():
                if not isinstance(value, torch.Tensor):
                    continue
                ref = seen.get(id(value))
                if ref is not None and ref() is value:
                    continue  # counted at an earlier step: optimizers update their state in place
                module, pname = self.owners.get(id(p), ("", ""))
                name = f"{pname}.{key}" if pname else str(key)
                self.count(value, OPTIMIZER_STATE, module=module, name=name, line="")
                seen[id(value)] = weakref.ref(value, functools.partial(seen.pop, id(value)))
        self.tracker.end_step("optimizer")

    def wrap_backward(self) -> None:
        original = torch.autograd.backward
        tracker = self.tracker

        @functools.wraps(original)
        def backward(*args: Any, **kwargs: Any) -> Any:
            outer = tracker.phase == "backward" or not tracker.tracking
            if not outer:
                tracker.enter("backward")
                self.backward_line = tracker.line_here()  # its gradients' (hooks: autograd's frames)
            try:
                return original(*args, **kwargs)
            except BaseException as e:
                if is_oom(e):
                    self.oom(e, "backward")
                raise
            finally:
                if not outer:
                    tracker.leave()

        self._backward, self._wrapped_backward = original, backward
        torch.autograd.backward = backward

    def _swap_backward(self, to: Any) -> None:
        """The backward wrapper on (followed steps) or off: an unfollowed step has no phase to time,
        and the wrapper cost 10-30 us of the bench loop's 8 ms step (its own 8 us, run cold after
        the forward). Left as it is where the program or a library put its own since."""
        if torch.autograd.backward in (self._backward, self._wrapped_backward):
            torch.autograd.backward = to

    def resample(self, now: float) -> None:
        """At a step's end (``now``): follow the next step tensor by tensor, or only mark it."""
        tracker = self.tracker
        if self.sampling.every <= 1:
            return
        memory = self.memory() if self.sampling.memory_due(tracker.ended - 1, now) else -1
        tracking = self.sampling.next_tracked(tracker.ended - 1, memory)
        if tracking == tracker.tracking or (not tracking and (tracker.modules or self.pushed)):
            return  # unchanged, or a step ended inside a forward (memgauge.step()): left as it is
        tracker.tracking = tracking
        self._swap_backward(self._wrapped_backward if tracking else self._backward)
        if tracking:
            self._hook_modules()
            for key, ref in list(self.hooked.items()):
                p = ref()
                if p is not None:
                    self._hook_grad(key, p)
        else:
            self._unhook(self.module_handles)
            self._unhook(self.grad_handles)

    @staticmethod
    def _unhook(handles: list[Any] | dict[int, Any]) -> None:
        for handle in handles.values() if isinstance(handles, dict) else handles:
            handle.remove()
        handles.clear()

    def memory(self) -> int:
        """The process's resident bytes and its CUDA tensors' (-1 when unknown)."""
        level = self.resident.read()
        if level < 0:
            return -1
        for device in self.tracker.devices:
            if device.startswith("cuda"):
                level += torch.cuda.memory_allocated(device)
        return level

    # -- in and out ------------------------------------------------------------------------------

    def _hook_modules(self) -> None:
        modules = torch.nn.modules.module
        self.module_handles.append(modules.register_module_forward_pre_hook(self.forward_pre))
        self.module_handles.append(modules.register_module_forward_hook(self.forward_post, always_call=True))

    def install(self) -> None:
        quiet_compile_warning()
        self._hook_modules()
        self.tracker.after_step = self.resample
        self.handles.append(register_optimizer_step_pre_hook(self.step_pre))
        self.handles.append(register_optimizer_step_post_hook(self.step_post))
        self.wrap_backward()
        if self.tracker.mode == "full":
            from memgauge.sections.torch._capture_full import full_mode

            self.mode = full_mode(self)
            self.mode.__enter__()  # type: ignore[no-untyped-call]

    def uninstall(self) -> None:
        self._unhook(self.handles)
        self._unhook(self.module_handles)
        self._unhook(self.grad_handles)
        keras_disconnect()
        self.tracker.after_step = None
        if self._backward is not None:
            self._swap_backward(self._backward)
            self._backward = None
        if self.mode is not None:
            self.mode.__exit__(None, None, None)  # type: ignore[no-untyped-call]
            self.mode = None

    def at_exit(self) -> None:
        if self.tracker.pid != os.getpid():
            return
        # an uncaught error: Python keeps it in sys.last_exc (3.12) / sys.last_value before atexit
        last = getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)
        if isinstance(last, BaseException) and is_oom(last):
            self.oom(last, "uncaught")
        self.tracker.flush()

    def oom(self, exception: BaseException, where: str) -> None:
        """An out-of-memory error: every live tensor is looked for first (a gc walk, once per
        error), so that what the hooks never saw (a model never called) is in the record too."""
        if not self.tracker.seen_oom(exception):
            self.snapshot()
            self.tracker.out_of_memory(exception, where)

    def snapshot(self) -> list[dict[str, Any]]:
        """Every live storage: those the hooks counted (autograd's saved tensors included, which no
        Python object holds) and every tensor the garbage collector knows, found now."""
        import gc

        tensor, parameter = torch.Tensor, torch.nn.Parameter
        for obj in gc.get_objects():
            # type(), not isinstance: isinstance reads __class__, which some objects compute (with
            # a deprecation warning, as torch.distributed.reduce_op does)
            kind = type(obj)
            if issubclass(kind, tensor):
                if issubclass(kind, parameter):
                    self.count(obj, PARAMETERS, module="", line="")
                    if obj.grad is not None:
                        self.count(obj.grad, GRADIENTS, module="", line="")
                else:
                    self.count(obj, OTHER, module="", line="")
        return self.tracker.live()


def _unpack(t: torch.Tensor) -> torch.Tensor:
    return t


def connect(mode: str, directory: str) -> Tracker:
    """A tracker for this process, connected to torch; written to ``directory`` (none: kept in
    memory only, for ``memgauge.torch`` in a process no runner measures)."""
    import memgauge

    internal = tuple(
        os.path.dirname(os.path.abspath(path)) + os.sep
        for path in (torch.__file__, memgauge.__file__)
        if path is not None
    )
    tracker = Tracker(mode, internal=internal, write=record_writer(directory, TORCH) if directory else None)
    plug_sections(tracker, "made")
    hooks = Hooks(tracker)
    hooks.install()
    tracker.hooks = hooks
    atexit.register(hooks.at_exit)
    plug_sections(tracker, "connected", torch, directory)  # the GPU's cap, the loop's data and FLOPs
    return tracker
