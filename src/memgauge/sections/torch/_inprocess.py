"""The torch part of a ``memgauge.profile()`` block: ``Profile.torch`` from this process's tracker.

``memgauge run`` reads the tracker's record from a file after the program (``_assemble``); a block
reads the same record from the tracker itself, in memory. Where torch is imported and no tracker
runs yet (a plain ``python`` process), the block starts one (the mode ``MEMGAUGE_TORCH`` asks for)
and disconnects it when it ends, so that the program after the block runs unhooked and the next
block counts from its own start. A torch first imported inside the block is not seen: the hooks
connect only to a loaded torch, and a block does not install the import finder of ``memgauge run``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from memgauge._env import ENV_TORCH
from memgauge.sections.torch._capture import TORCH_MODES, active_torch_tracker, start_tracking, stop_tracking
from memgauge.sections.torch._read import torch_memory
from memgauge.sections.torch._record import TorchMemory

# the tracker counts since it started: a block inside a longer tracked run shares its peak
_SHARED_NOTE = (
    "torch was tracked before this block began: the peak and each role's maximum may be from before "
    "it; the steps are the block's own"
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.model import Profile


class BlockTorch:
    """Started with the block, read when it ends (``memory``)."""

    def __init__(self) -> None:
        self._tracker: Any = None  # capture's Tracker, whose module is capture's own
        self._started = False  # this block started the tracker, and stops it
        # the tracker's steps before the block: listed, dropped, not followed, all
        self._listed = self._dropped = self._untracked = self._ended = 0

    def start(self) -> None:
        tracker = active_torch_tracker()
        mode = os.environ.get(ENV_TORCH, "summary")
        if tracker is None and _torch_loaded() and mode != "off":
            tracker = start_tracking(mode if mode in TORCH_MODES else "summary", "")
            self._started = tracker is not None
        self._tracker = tracker
        if tracker is not None:
            self._listed, self._dropped = len(tracker.steps), tracker.steps_dropped
            self._untracked, self._ended = tracker.steps_untracked, tracker.ended

    def memory(self, t0: float) -> TorchMemory | None:
        """The tracker's figures, times from ``t0`` (the block's start); None without a tracker.
        Disconnects the tracker this block started."""
        tracker = self._tracker
        if tracker is None or tracker.pid != os.getpid():
            return None
        try:
            record = tracker.record()
            # numbered from the block's first step
            record["steps"] = [
                {**s, "index": int(s.get("index", 0)) - self._ended} for s in record["steps"][self._listed :]
            ]
            record["steps_dropped"] = tracker.steps_dropped - self._dropped
            record["steps_untracked"] = tracker.steps_untracked - self._untracked
            memory = torch_memory(record, t0)
        finally:
            if self._started:
                stop_tracking(tracker)
        if not self._started:
            memory.notes.append(_SHARED_NOTE)
        return memory

    def fill(self, profile: Profile, t0: float) -> None:
        """The block's part of its profile (the registry's "block")."""
        profile.torch = self.memory(t0)

    def close(self) -> None:
        """Nothing to let go of: ``memory`` stops the tracker this block started."""


def _torch_loaded() -> bool:
    # a half-imported torch (the block opened inside torch's own import) has no nn yet
    module = sys.modules.get("torch")
    return module is not None and hasattr(module, "nn")
