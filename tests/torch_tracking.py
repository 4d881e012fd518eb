"""A torch tracker connected for one test (unit tests that drive the hooks in this process)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from memgauge.sections.torch._capture import set_torch_tracker
from memgauge.sections.torch._capture_hooks import connect
from memgauge.sections.torch._capture_track import Tracker


@contextlib.contextmanager
def connected(mode: str = "summary") -> Iterator[Tracker]:
    """A tracker in ``mode``, connected to torch and set as this process's, written nowhere; taken
    off again at the end."""
    t = connect(mode, "")
    set_torch_tracker(t)
    try:
        yield t
    finally:
        assert t.hooks is not None
        t.hooks.uninstall()
        set_torch_tracker(None)
