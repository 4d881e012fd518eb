"""Bytes pickled between processes: what ``multiprocessing`` sends through queues, pipes and pools.

Standard library only. Every object ``multiprocessing`` sends to another process (``Queue.put``,
which pickles in the queue's feeder thread, ``SimpleQueue``, ``Connection.send``, ``Pool`` tasks and
results, torch DataLoader workers' batches) is pickled by
``multiprocessing.reduction.ForkingPickler.dumps``: wrapping that one class method counts the bytes
each send pickled. Torch registers its own reducers on ``ForkingPickler`` for tensors and storages,
which hand a storage over in shared memory (a file descriptor and a size are pickled, not the
data): those reducers are wrapped too, and the storages' bytes counted apart (``shared_bytes``), so a
DataLoader worker's batches are seen whole.

Nothing happens until the program imports ``multiprocessing`` (whose ``context`` imports
``reduction``): the bootstrap puts a finder first on ``sys.meta_path`` that answers for
``multiprocessing.reduction`` alone. Forked children inherit the wrapped method; spawned ones run
the bootstrap themselves. Each process counts its own sends into its loop's record
(``sections/training/_capture.Loop.pickles``): written about once a second while it pickles
(``_wire.WritePace``), at ``atexit``, and at multiprocessing's own exit of a child process
(``util._exit_function``; children leave through ``os._exit``, which runs no ``atexit``).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType
    from typing import Any

MODULE = "multiprocessing.reduction"
_WRAPPED = "__memgauge_counted__"


class Pickles:
    """The sends of one process: how many pickles and their bytes, and the storages handed over in
    shared memory (torch's reducers) with their bytes."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.count = 0
        self.bytes = 0
        self.shared_count = 0
        self.shared_bytes = 0

    def pickled(self, nbytes: int) -> None:
        self.count += 1
        self.bytes += nbytes

    def shared(self, nbytes: int) -> None:
        self.shared_count += 1
        self.shared_bytes += nbytes

    def record(self) -> dict[str, int]:
        return {
            "count": self.count,
            "bytes": self.bytes,
            "shared_count": self.shared_count,
            "shared_bytes": self.shared_bytes,
        }


_counter: Pickles | None = None
_loop: Any = None
_checked_pid = -1


def counter() -> Pickles | None:
    """This process's counter, made at its first send when a runner measures the process (its
    loop keeps it); None when nothing is measured."""
    global _counter, _loop, _checked_pid
    found = _counter
    pid = os.getpid()
    if found is not None and found.pid == pid:
        return found
    if _checked_pid == pid:
        return None
    _checked_pid = pid
    _counter = None
    from memgauge.sections.training._capture import current_loop

    loop = current_loop()
    if loop is None:
        return None
    found = _counter = Pickles()
    loop.pickles = found
    _loop = loop
    return found


class _Sentinel:
    """What ``register_after_fork`` holds (it keeps its objects by weak reference)."""


_SENTINEL = _Sentinel()


def _at_exit() -> None:
    found, loop = _counter, _loop
    if found is not None and found.pid == os.getpid() and loop is not None:
        loop.at_exit()


def _finalize_last(_: object = None) -> None:
    """Write the record among multiprocessing's finalizers, last (below the queues' feeder joins,
    -5: what the feeder threads still pickle is in). A child process leaves through ``os._exit``
    after running them; the main process runs them at exit, after the program's ``atexit``
    callbacks. Registered in this process now and, for each forked child, as it starts (a child
    clears the finalizers it inherits): a finalizer registered at the child's first send could come
    after its exit began, and be missed."""
    from multiprocessing import util

    util.Finalize(None, _at_exit, exitpriority=-100)


def _flush_now_and_then() -> None:
    loop = _loop
    if loop is not None and loop.pace.due(loop.clock()):
        loop.flush()


def storage_bytes(obj: object) -> int:
    """The bytes of a tensor's storage, or of a storage; 0 for anything else."""
    try:
        untyped = getattr(obj, "untyped_storage", None)
        if untyped is not None:
            return int(untyped().nbytes())
        nbytes = getattr(obj, "nbytes", None)
        if callable(nbytes):
            return int(nbytes())
    except Exception:  # a storage we cannot size must not fail the send
        return 0
    return 0


def _wrap_reducer(original: Any, *, cuda_only: bool) -> Any:
    def reduce(obj: object) -> Any:
        found = counter()
        if found is not None and (not cuda_only or getattr(obj, "is_cuda", False)):
            found.shared(storage_bytes(obj))
        return original(obj)

    setattr(reduce, _WRAPPED, True)
    return reduce


def _wrap_torch_reducers(reducers: dict[Any, Any]) -> None:
    """A CPU tensor is reduced to its typed storage, and that to its untyped storage, which
    ``reduce_storage`` moves to shared memory: counted there, once per storage. A CUDA tensor's
    ``reduce_tensor`` hands its storage over through CUDA IPC itself: counted there."""
    for kind, reducer in list(reducers.items()):
        module = getattr(reducer, "__module__", "") or ""
        name = getattr(reducer, "__name__", "")
        if not module.startswith("torch.") or getattr(reducer, _WRAPPED, False):
            continue
        if name in ("reduce_storage", "reduce_tensor"):
            reducers[kind] = _wrap_reducer(reducer, cuda_only=name == "reduce_tensor")


def hook(module: ModuleType) -> None:
    """Wrap ``module.ForkingPickler.dumps`` (idempotent)."""
    pickler = getattr(module, "ForkingPickler", None)
    method = pickler.__dict__.get("dumps") if pickler is not None else None
    if not isinstance(method, classmethod) or getattr(method.__func__, _WRAPPED, False):
        return
    original = method.__func__
    seen = [-1]  # the size of the extra reducers' table when last wrapped

    def dumps(cls: Any, obj: object, protocol: int | None = None) -> Any:
        reducers = cls._extra_reducers
        if len(reducers) != seen[0]:  # torch registers its reducers when it is imported
            _wrap_torch_reducers(reducers)
            seen[0] = len(reducers)
        out = original(cls, obj, protocol)
        found = counter()
        if found is not None:
            found.pickled(len(out) if not isinstance(out, memoryview) else out.nbytes)
            _flush_now_and_then()
        return out

    setattr(dumps, _WRAPPED, True)
    pickler.dumps = classmethod(dumps)  # type: ignore[union-attr]
    from multiprocessing import util

    _finalize_last()
    util.register_after_fork(_SENTINEL, _finalize_last)


class _Finder:
    """Answers ``find_spec`` for ``multiprocessing.reduction`` only, and hooks it once loaded."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != MODULE:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_hook(module: ModuleType) -> None:
            exec_module(module)
            hook(module)

        spec.loader.exec_module = exec_then_hook  # type: ignore[method-assign]
        return spec


def install() -> None:
    """Called by the bootstrap: hook now if ``multiprocessing`` is loaded, else when it is."""
    loaded = sys.modules.get(MODULE)
    if loaded is not None:
        hook(loaded)
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


def start(directory: str) -> None:
    """The registry's "capture" part, called by the bootstrap of every measured process."""
    install()
