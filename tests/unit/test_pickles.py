"""Bytes pickled between processes, in this process: the ``ForkingPickler.dumps`` hook on a private
subclass (so the real class stays unhooked), with its own table of reducers, counting what
``dumps`` returns and the storages torch's reducers hand over in shared memory."""

from __future__ import annotations

import importlib
import pickle
import types
from multiprocessing.reduction import ForkingPickler
from typing import Any

import pytest

from memgauge.sections.training import _capture_pickles as _pickles
from memgauge.sections.training._capture_pickles import Pickles, hook, storage_bytes


def private_module() -> Any:
    """A module whose ``ForkingPickler`` is a subclass with its own ``dumps`` and reducers."""
    cls = type(
        "ForkingPickler",
        (ForkingPickler,),
        {"dumps": ForkingPickler.__dict__["dumps"], "_extra_reducers": dict(ForkingPickler._extra_reducers)},
    )
    return types.SimpleNamespace(ForkingPickler=cls)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Pickles:
    found = Pickles()
    monkeypatch.setattr(_pickles, "counter", lambda: found)
    monkeypatch.setattr(_pickles, "_loop", None)
    return found


def test_dumps_counts_each_pickle_and_its_bytes(counted: Pickles) -> None:
    module = private_module()
    hook(module)
    hook(module)  # idempotent: wrapped once
    payloads = [b"x" * 1000, list(range(100)), {"a": "b" * 50}]
    sizes = [len(module.ForkingPickler.dumps(p)) for p in payloads]
    assert sizes == [len(pickle.dumps(p, protocol=pickle.DEFAULT_PROTOCOL)) for p in payloads]
    assert counted.count == 3
    assert counted.bytes == sum(sizes)
    assert counted.shared_count == 0
    # the real class is left as it was
    assert not hasattr(vars(ForkingPickler)["dumps"].__func__, "__memgauge_counted__")


def test_torch_storages_handed_over_in_shared_memory_are_counted_once(counted: Pickles) -> None:
    torch: Any = pytest.importorskip("torch")
    importlib.import_module("torch.multiprocessing")  # registers torch's reducers on ForkingPickler

    module = private_module()
    module.ForkingPickler._extra_reducers = dict(ForkingPickler._extra_reducers)
    hook(module)
    t = torch.zeros(64, 32)  # 8192 bytes
    t.share_memory_()  # already shared: torch moves nothing, and sends a handle
    pickled = module.ForkingPickler.dumps((t, t[0]))
    assert counted.count == 1 and counted.bytes == len(pickled) < 8192
    # the tensor and its view share one storage: pickled once (pickle's memo), counted once
    assert counted.shared_bytes == 8192
    assert counted.shared_count == 1
    assert storage_bytes(t) == 8192
    assert storage_bytes(t.untyped_storage()) == 8192
    assert storage_bytes(object()) == 0


def test_record() -> None:
    p = Pickles()
    p.pickled(10)
    p.pickled(5)
    p.shared(100)
    assert p.record() == {"count": 2, "bytes": 15, "shared_count": 1, "shared_bytes": 100}
