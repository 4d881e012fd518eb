"""The GPU part of a ``memgauge.profile()`` block (and so of the pytest plugin's budgets):
``Profile.gpu`` for this process over the block.

Where the program has torch loaded: its allocator read through a ``GpuLog`` of the block's own,
whose peaks are reset when the block begins, and NVML polled by a sampler thread while it runs.
Where a torch tracker runs, the block is one of its log's windows (``GpuLog.window_open``): the
tracker's resets inside it (steps' ends, phases' boundaries) fold the peaks into the block's first,
and the steps and phases that end inside the block are its ``windows``. Without torch loaded
nothing starts (a block costs nothing more).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from memgauge.sections.gpu._assemble import assemble_gpu
from memgauge.sections.gpu._capture_log import GpuLog
from memgauge.sections.gpu._nvml_sampler import NvmlSampler
from memgauge.sections.gpu._nvml_start import start_nvml_sampler
from memgauge.sections.gpu._record import GpuDevice
from memgauge.sections.torch import active_torch_tracker

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.model import Profile


class BlockGpu:
    def __init__(self) -> None:
        self._log: GpuLog | None = None
        self._sampler: NvmlSampler | str = "torch not loaded"
        self._tracker: Any = None
        self._windows = 0  # the tracker's windows closed before the block

    def start(self) -> None:
        if "torch" not in sys.modules:
            return
        self._tracker = active_torch_tracker()
        if self._tracker is not None:
            # the block is a window of the tracker's log: every reset the tracker makes inside it
            # (a step's end, a phase's boundary) folds the peaks into the block's first
            self._tracker.gpu.window_open(self)
            self._windows = len(self._tracker.gpu.windows)
            self._log = GpuLog(self._tracker.gpu.source)
        else:
            # torch.cuda, or the tests' scripted one (ENV_FAKE_CUDA)
            self._log = GpuLog()
            self._log.reset()
        self._sampler = start_nvml_sampler(os.getpid())

    def devices(self) -> list[GpuDevice]:
        """The block's devices (empty: no GPU used, or torch not loaded). Stops the sampler."""
        samples = None if isinstance(self._sampler, str) else self._sampler.stop()
        if self._log is None:
            return []
        peaks = {} if self._tracker is None else self._tracker.gpu.window_close(self)
        record = self._log.record()
        if record is not None:
            for row in record["devices"]:
                for key, value in peaks.get(row["index"], {}).items():
                    # the window's own peaks (the log's reading came after the window's reset)
                    row[key] = value if key == "reserved_unallocated_at_peak" else max(row[key], value)
            if self._tracker is not None:
                # the steps and phases that ended inside the block (``phase.gpu=`` budgets judge them)
                record["windows"] = self._tracker.gpu.windows[self._windows :]
        records = {} if record is None else {os.getpid(): record}
        note = self._sampler if isinstance(self._sampler, str) else ""
        devices, _ = assemble_gpu(records, samples, {os.getpid()}, note)
        return devices

    def fill(self, profile: Profile, t0: float) -> None:
        """The block's part of its profile (the registry's "block")."""
        profile.gpu = self.devices()

    def close(self) -> None:
        """Nothing to let go of: ``devices`` stops the NVML sampler."""
