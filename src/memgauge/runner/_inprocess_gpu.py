"""The GPU part of a ``memgauge.profile()`` block (and so of the pytest plugin's budgets):
``Profile.gpu`` for this process over the block.

Where the program has torch loaded: its allocator read through a ``GpuLog`` of the block's own,
whose peaks are reset when the block begins, and NVML polled by a sampler thread while it runs.
A torch tracker resets the peaks at each step's end too: the block's peak is then the largest of
the tracker's windows that ended inside the block and the block's own final reading. Without
torch loaded nothing starts (a block costs nothing more).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from memgauge.capture import GpuLog, active_torch_tracker
from memgauge.model import GpuDevice
from memgauge.runner._assemble_gpu import assemble_gpu
from memgauge.watcher import NvmlSampler, start_nvml_sampler


class BlockGpu:
    def __init__(self) -> None:
        self._log: GpuLog | None = None
        self._sampler: NvmlSampler | str = "torch not loaded"
        self._tracker: Any = None
        self._windows = 0

    def start(self) -> None:
        if "torch" not in sys.modules:
            return
        self._tracker = active_torch_tracker()
        if self._tracker is not None:
            # the reset below would hide the peaks of the tracker's open window: its run's peaks
            # take them first
            self._tracker.gpu.record()
            self._windows = len(self._tracker.gpu.windows)
        # torch.cuda (the tracker's, where one runs), or the tests' scripted one (ENV_FAKE_CUDA)
        self._log = GpuLog(None if self._tracker is None else self._tracker.gpu.source)
        self._log.reset()
        self._sampler = start_nvml_sampler(os.getpid())

    def devices(self) -> list[GpuDevice]:
        """The block's devices (empty: no GPU used, or torch not loaded). Stops the sampler."""
        samples = None if isinstance(self._sampler, str) else self._sampler.stop()
        if self._log is None:
            return []
        record = self._log.record()
        if record is not None and self._tracker is not None:
            # the tracker's windows closed inside the block hold peaks a step's reset hid from us
            for w in self._tracker.gpu.windows[self._windows :]:
                row = next((d for d in record["devices"] if d["index"] == w["device"]), None)
                if row is not None:
                    row["allocated_peak"] = max(row["allocated_peak"], w["allocated_peak"])
                    row["reserved_peak"] = max(row["reserved_peak"], w["reserved_peak"])
                    row["active_peak"] = max(row["active_peak"], w["active_peak"])
        records = {} if record is None else {os.getpid(): record}
        note = self._sampler if isinstance(self._sampler, str) else ""
        devices, _ = assemble_gpu(records, samples, {os.getpid()}, note)
        return devices
