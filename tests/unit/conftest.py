"""Unit tests run in this process alone: a test here that starts a process fails, so the split
between ``tests/unit`` (fast, pure) and ``tests/integration`` (real processes, servers, browsers)
stays true."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _no_child_processes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    started: list[str] = []
    popen_init = subprocess.Popen.__init__

    def popen(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        started.append(repr(args))
        popen_init(self, args, *rest, **kwargs)

    def fork() -> int:
        started.append("os.fork()")
        raise AssertionError("a unit test forked: it belongs in tests/integration")

    monkeypatch.setattr(subprocess.Popen, "__init__", popen)
    monkeypatch.setattr(os, "fork", fork)
    yield
    assert started == [], f"a unit test started processes {started}: it belongs in tests/integration"
