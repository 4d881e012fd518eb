"""Capture: what runs inside the measured process.

The instruments (phases, metrics, the line sampler, the allocation tracker's start, the torch
tracker, which starts only when the program imports torch), the readers of ``/proc`` for one
process, and the one versioned wire format the measured process writes (``_wire``: events, line
files, allocation captures, torch records) with its readers, which name every file they could not
use in warnings for the profile. Stdlib only, and lazy: importing this package loads nothing until
a name is used, so the measured program starts as fast as without memgauge.
"""

from __future__ import annotations

from memgauge._lazy import attach

# not `from typing import TYPE_CHECKING`: importing typing costs the measured process ~8 ms
TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.capture._alloc_read import read_allocations
    from memgauge.capture._bytecode import stalled_line
    from memgauge.capture._events import (
        AUTOSTART_DIR,
        BOOTSTRAP_FAILED,
        BOOTSTRAP_FILE,
        bootstrap_args,
    )
    from memgauge.capture._events_read import read_events
    from memgauge.capture._frames import is_library, is_own
    from memgauge.capture._gpu import GpuLog, ScriptedCudaSource, TorchCudaSource
    from memgauge.capture._gpu_cap import install_cap
    from memgauge.capture._gpu_read import read_gpu_records, read_gpu_snapshot
    from memgauge.capture._gpu_snapshot import install_snapshot
    from memgauge.capture._knobs import top_level_assignments
    from memgauge.capture._knobs_read import knobs_request, read_knobs
    from memgauge.capture._lines_join import join_outside_lines
    from memgauge.capture._lines_read import LineData, read_lines, source_line
    from memgauge.capture._phases import (
        ClosedPhase,
        OpenPhase,
        PhaseTracker,
        ProcSelfSource,
        active_tracker,
        phase,
        set_tracker,
    )
    from memgauge.capture._procfs import (
        PAGE_SIZE,
        OpenFiles,
        StatSample,
        kill_until_gone,
        orphaned_entries,
        parse_high_water,
        parse_stat,
        read_cmdline,
        read_stat,
        scan_ppids,
    )
    from memgauge.capture._program import program_environment
    from memgauge.capture._protocols import MemorySource
    from memgauge.capture._record import listen_metrics, metrics_from_events, record, unlisten_metrics
    from memgauge.capture._sample_keys import BEFORE_KEY
    from memgauge.capture._sampler import Sampler
    from memgauge.capture._sampling import (
        ATTACHED_MARK,
        INSIDE_MARK,
        OUTSIDE_MARK,
        active_sampler,
        start_sampler,
    )
    from memgauge.capture._torch import (
        TORCH_MODES,
        active_torch_tracker,
        live_tensors,
        start_tracking,
        stop_tracking,
    )
    from memgauge.capture._torch_read import read_torch, torch_memory
    from memgauge.capture._training import step, timed_iter
    from memgauge.capture._training_block import BlockLoop, start_block_loop
    from memgauge.capture._training_io import parse_io
    from memgauge.capture._training_read import LoopRecord, read_training
    from memgauge.capture._wire import (
        EV_ERROR,
        EV_EXIT,
        EV_HWM_RESET,
        EV_PHASE_END,
        EV_PHASE_START,
        MODULE_NOT_FOUND,
        WIRE_VERSION,
        records_written,
    )

_NAMES = {
    "active_sampler": "_sampling",
    "ATTACHED_MARK": "_sampling",
    "OUTSIDE_MARK": "_sampling",
    "INSIDE_MARK": "_sampling",
    "join_outside_lines": "_lines_join",
    "active_tracker": "_phases",
    "AUTOSTART_DIR": "_events",
    "BEFORE_KEY": "_sample_keys",
    "stalled_line": "_bytecode",
    "BOOTSTRAP_FAILED": "_events",
    "BOOTSTRAP_FILE": "_events",
    "bootstrap_args": "_events",
    "ClosedPhase": "_phases",
    "knobs_request": "_knobs_read",
    "read_knobs": "_knobs_read",
    "top_level_assignments": "_knobs",
    "EV_ERROR": "_wire",
    "records_written": "_wire",
    "EV_EXIT": "_wire",
    "EV_HWM_RESET": "_wire",
    "EV_PHASE_END": "_wire",
    "EV_PHASE_START": "_wire",
    "GpuLog": "_gpu",
    "install_cap": "_gpu_cap",
    "ScriptedCudaSource": "_gpu",
    "TorchCudaSource": "_gpu",
    "read_gpu_records": "_gpu_read",
    "read_gpu_snapshot": "_gpu_read",
    "install_snapshot": "_gpu_snapshot",
    "TORCH_MODES": "_torch",
    "active_torch_tracker": "_torch",
    "live_tensors": "_torch",
    "start_tracking": "_torch",
    "step": "_training",
    "timed_iter": "_training",
    "BlockLoop": "_training_block",
    "start_block_loop": "_training_block",
    "LoopRecord": "_training_read",
    "read_training": "_training_read",
    "stop_tracking": "_torch",
    "read_torch": "_torch_read",
    "torch_memory": "_torch_read",
    "is_library": "_frames",
    "is_own": "_frames",
    "kill_until_gone": "_procfs",
    "LineData": "_lines_read",
    "listen_metrics": "_record",
    "MemorySource": "_protocols",
    "metrics_from_events": "_record",
    "MODULE_NOT_FOUND": "_wire",
    "OpenFiles": "_procfs",
    "OpenPhase": "_phases",
    "orphaned_entries": "_procfs",
    "PAGE_SIZE": "_procfs",
    "parse_high_water": "_procfs",
    "parse_io": "_training_io",
    "parse_stat": "_procfs",
    "StatSample": "_procfs",
    "phase": "_phases",
    "PhaseTracker": "_phases",
    "ProcSelfSource": "_phases",
    "program_environment": "_program",
    "read_allocations": "_alloc_read",
    "read_cmdline": "_procfs",
    "read_events": "_events_read",
    "read_lines": "_lines_read",
    "read_stat": "_procfs",
    "record": "_record",
    "Sampler": "_sampler",
    "scan_ppids": "_procfs",
    "set_tracker": "_phases",
    "source_line": "_lines_read",
    "start_sampler": "_sampling",
    "unlisten_metrics": "_record",
    "WIRE_VERSION": "_wire",
}
__all__ = [
    "ATTACHED_MARK",
    "AUTOSTART_DIR",
    "BEFORE_KEY",
    "BOOTSTRAP_FAILED",
    "BOOTSTRAP_FILE",
    "EV_ERROR",
    "EV_EXIT",
    "EV_HWM_RESET",
    "EV_PHASE_END",
    "EV_PHASE_START",
    "INSIDE_MARK",
    "MODULE_NOT_FOUND",
    "OUTSIDE_MARK",
    "PAGE_SIZE",
    "TORCH_MODES",
    "WIRE_VERSION",
    "BlockLoop",
    "ClosedPhase",
    "GpuLog",
    "LineData",
    "LoopRecord",
    "MemorySource",
    "OpenFiles",
    "OpenPhase",
    "PhaseTracker",
    "ProcSelfSource",
    "Sampler",
    "ScriptedCudaSource",
    "StatSample",
    "TorchCudaSource",
    "active_sampler",
    "active_torch_tracker",
    "active_tracker",
    "bootstrap_args",
    "install_cap",
    "install_snapshot",
    "is_library",
    "is_own",
    "join_outside_lines",
    "kill_until_gone",
    "knobs_request",
    "listen_metrics",
    "live_tensors",
    "metrics_from_events",
    "orphaned_entries",
    "parse_high_water",
    "parse_io",
    "parse_stat",
    "phase",
    "program_environment",
    "read_allocations",
    "read_cmdline",
    "read_events",
    "read_gpu_records",
    "read_gpu_snapshot",
    "read_knobs",
    "read_lines",
    "read_stat",
    "read_torch",
    "read_training",
    "record",
    "records_written",
    "scan_ppids",
    "set_tracker",
    "source_line",
    "stalled_line",
    "start_block_loop",
    "start_sampler",
    "start_tracking",
    "step",
    "stop_tracking",
    "timed_iter",
    "top_level_assignments",
    "torch_memory",
    "unlisten_metrics",
]
__getattr__, __dir__ = attach(__name__, _NAMES)
