"""The torch capture source's entry point: noticing that the program imports torch, and ``step()``.

Standard library only, and nothing at all happens until the program imports torch: the bootstrap
(``_start``) puts a finder first on ``sys.meta_path`` that answers for ``torch`` alone (one string
comparison per new import); once torch's own ``__init__`` has run, the finder takes itself off and
``_capture_hooks`` connects the tracker (``_capture_track``) to torch. memgauge never imports torch
itself: a program that does not use it pays one comparison per import.

``MEMGAUGE_TORCH`` chooses the mode: ``off``, ``summary`` (the default: hooks at module, autograd
and optimizer boundaries) or ``full`` (every operator's outputs, through a dispatch mode).
"""

from __future__ import annotations

import os
import sys

from memgauge._env import ENV_TORCH

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType
    from typing import Any

    from memgauge.sections.torch._capture_track import Tracker

TORCH_MODES = ("off", "summary", "full")

_active: Tracker | None = None


def torch_mode(environ: dict[str, str] | os._Environ[str] | None = None) -> str:
    """The mode the environment asks for; an unknown value means the default (summary)."""
    value = (environ if environ is not None else os.environ).get(ENV_TORCH, "summary")
    return value if value in TORCH_MODES else "summary"


def active_torch_tracker() -> Tracker | None:
    """The tracker of this process (None before torch is imported, or with ``--torch=off``)."""
    if _active is not None and _active.pid != os.getpid():
        return None  # a forked child: its parent's tensors are not its own
    return _active


def set_torch_tracker(tracker: Tracker | None) -> None:
    global _active
    _active = tracker


def step() -> None:
    """Mark the end of a step (an inference batch, an environment step) where no optimizer marks
    it. Costs one global lookup when nothing is measured."""
    tracker = _active
    if tracker is not None:
        tracker.end_step("explicit")


def live_tensors() -> list[dict[str, Any]]:
    """Every live storage of this process, largest first, as rows (``_capture_track.Entry.row``);
    starts a tracker (summary mode, written nowhere) where none runs, so that tensors autograd
    saves from now on are seen too. Empty when torch cannot be hooked or tracking is off."""
    tracker = active_torch_tracker()
    if tracker is None and os.environ.get(ENV_TORCH) != "off":
        tracker = start_tracking("summary", "")
    if tracker is None or tracker.hooks is None:
        return []
    import gc

    # storages in unreachable cycles (a model dropped with its hooks) are garbage, not live: collect
    # them first, or their weak references' callbacks have not yet taken them off the table
    gc.collect()
    rows: list[dict[str, Any]] = tracker.hooks.snapshot()
    return rows


class _TorchFinder:
    """Answers ``find_spec`` for ``torch`` only, wrapping its loader so that the tracker starts
    once torch's ``__init__`` has finished (not before: a half-imported torch has no ``nn``)."""

    def __init__(self, directory: str, mode: str) -> None:
        self.directory = directory
        self.mode = mode

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != "torch":
            return None
        _remove_finder(self)
        import importlib.util

        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module
        finder = self

        def exec_then_start(module: ModuleType) -> None:
            exec_module(module)
            finder.started(module)

        # only this spec's loader object: a fresh one per find_spec, so no other module sees it
        loader.exec_module = exec_then_start  # type: ignore[method-assign]
        return spec

    def started(self, module: ModuleType) -> None:
        start_tracking(self.mode, self.directory)
        from memgauge._env import ENV_PREDICT, ENV_REMEDY

        if os.environ.get(ENV_REMEDY) or os.environ.get(ENV_PREDICT):
            _start_what_if()


def _start_what_if() -> None:
    """``memgauge fit``'s runs: remedies hooked on the model, or a prediction under fake tensors;
    after the tracker, so that their hooks run after its own."""
    from memgauge.sections.torch._capture_predict import start_prediction_from_env
    from memgauge.sections.torch._capture_remedies import apply_remedies_from_env

    apply_remedies_from_env()
    start_prediction_from_env(active_torch_tracker)


def _remove_finder(finder: object) -> None:
    if finder in sys.meta_path:
        sys.meta_path.remove(finder)


def start_tracking(mode: str, directory: str) -> Tracker | None:
    """Connect a tracker to the loaded torch (idempotent per process). Never raises into the
    program: a torch this code cannot hook runs unmeasured, and the record says nothing."""
    if mode == "off":
        return None
    current = active_torch_tracker()
    if current is not None:
        return current
    try:
        from memgauge.sections.torch._capture_hooks import connect

        tracker = connect(mode, directory)
    except Exception:  # a torch we cannot hook must not break the program
        return None
    set_torch_tracker(tracker)
    return tracker


def stop_tracking(tracker: Tracker) -> None:
    """Disconnect ``tracker`` from torch and forget it: for a tracker started for one
    ``memgauge.profile()`` block, so that the program after the block runs unhooked and the next
    block counts from its own start."""
    import atexit

    if tracker.hooks is not None:
        tracker.hooks.uninstall()
        atexit.unregister(tracker.hooks.at_exit)
    if _active is tracker:
        set_torch_tracker(None)


def install(directory: str) -> None:
    """Called by the bootstrap: start now if torch is already loaded, else when it is imported."""
    mode = torch_mode()
    if mode == "off":
        return
    if "torch" in sys.modules and hasattr(sys.modules["torch"], "nn"):
        start_tracking(mode, directory)
        return
    if not any(isinstance(f, _TorchFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _TorchFinder(directory, mode))
