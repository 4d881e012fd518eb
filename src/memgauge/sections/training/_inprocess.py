"""The training part of a ``memgauge.profile()`` block: ``Profile.training`` for the steps the block
ran (``memgauge.step()``, optimizer steps under torch, DataLoader waits), assembled as ``memgauge
run`` assembles a program's (``_assemble_training.training_of``) from the record the block's loop
wrote (``capture.start_block_loop``) in a directory of the block's own, removed afterwards.
"""

from __future__ import annotations

import shutil
import tempfile
from typing import TYPE_CHECKING

from memgauge.sections.training._assemble import training_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from memgauge.model import CaptureWarning, ProcessRecord, Profile
    from memgauge.sections.training._capture_block import BlockLoop
    from memgauge.sections.training._record import Training


class BlockTraining:
    """Started with the block (after its torch tracker, which it connects to), read when it ends."""

    def __init__(self) -> None:
        self._dir: str | None = None
        self._loop: BlockLoop | None = None

    def start(self) -> None:
        from memgauge.sections.training._capture_block import start_block_loop

        self._dir = tempfile.mkdtemp(prefix="memgauge-training-")
        self._loop = start_block_loop(self._dir)

    def training(
        self, t0: float, processes: Sequence[ProcessRecord], warnings: list[CaptureWarning]
    ) -> Training | None:
        """The block's training figures, times from ``t0``; None when it took no step. Stops the
        block's loop."""
        if self._loop is None or self._dir is None:
            return None
        try:
            self._loop.stop()
            return training_of(self._dir, t0, processes, warnings=warnings)
        finally:
            self._loop = None
            self.close()

    def fill(self, profile: Profile, t0: float) -> None:
        """The block's part of its profile (the registry's "block"), after its lines and warnings."""
        profile.training = self.training(t0, profile.processes, profile.warnings)

    def close(self) -> None:
        """Stop the block's loop if ``training`` did not (idempotent)."""
        if self._loop is not None:
            self._loop.stop()
            self._loop = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
