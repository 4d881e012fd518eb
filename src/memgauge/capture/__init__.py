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
    from memgauge.capture._alloc import ENV_ALLOC
    from memgauge.capture._alloc_read import read_allocations
    from memgauge.capture._events import (
        AUTOSTART_DIR,
        BOOTSTRAP_FAILED,
        BOOTSTRAP_MODULE,
        ENV_EVENTS_DIR,
        ENV_LINES,
    )
    from memgauge.capture._events_read import read_events
    from memgauge.capture._frames import is_library, is_own
    from memgauge.capture._lines_read import LineData, RetainedSeries, read_lines, source_line
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
        kill_until_gone,
        orphaned_entries,
        parse_high_water,
        parse_stat,
        read_children,
        read_cmdline,
        read_stat,
        scan_ppids,
    )
    from memgauge.capture._program import program_environment
    from memgauge.capture._protocols import MemorySource
    from memgauge.capture._record import listen_metrics, metrics_from_events, record, unlisten_metrics
    from memgauge.capture._sampler import BEFORE_KEY, Sampler
    from memgauge.capture._sampling import active_sampler, start_sampler
    from memgauge.capture._torch import (
        ENV_TORCH,
        TORCH_MODES,
        active_torch_tracker,
        live_tensors,
        start_tracking,
        step,
        stop_tracking,
    )
    from memgauge.capture._torch_read import read_torch, torch_memory
    from memgauge.capture._wire import (
        EV_ERROR,
        EV_EXIT,
        EV_HWM_RESET,
        EV_METRIC,
        EV_PHASE_END,
        EV_PHASE_START,
        MODULE_NOT_FOUND,
        WIRE_VERSION,
    )

_NAMES = {
    "active_sampler": "_sampling",
    "active_tracker": "_phases",
    "AUTOSTART_DIR": "_events",
    "BEFORE_KEY": "_sampler",
    "BOOTSTRAP_FAILED": "_events",
    "BOOTSTRAP_MODULE": "_events",
    "ClosedPhase": "_phases",
    "ENV_ALLOC": "_alloc",
    "ENV_EVENTS_DIR": "_events",
    "ENV_LINES": "_events",
    "EV_ERROR": "_wire",
    "EV_EXIT": "_wire",
    "EV_HWM_RESET": "_wire",
    "EV_METRIC": "_wire",
    "EV_PHASE_END": "_wire",
    "EV_PHASE_START": "_wire",
    "ENV_TORCH": "_torch",
    "TORCH_MODES": "_torch",
    "active_torch_tracker": "_torch",
    "live_tensors": "_torch",
    "start_tracking": "_torch",
    "step": "_torch",
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
    "parse_stat": "_procfs",
    "phase": "_phases",
    "PhaseTracker": "_phases",
    "ProcSelfSource": "_phases",
    "program_environment": "_program",
    "read_allocations": "_alloc_read",
    "read_children": "_procfs",
    "read_cmdline": "_procfs",
    "read_events": "_events_read",
    "read_lines": "_lines_read",
    "read_stat": "_procfs",
    "record": "_record",
    "RetainedSeries": "_lines_read",
    "Sampler": "_sampler",
    "scan_ppids": "_procfs",
    "set_tracker": "_phases",
    "source_line": "_lines_read",
    "start_sampler": "_sampling",
    "unlisten_metrics": "_record",
    "WIRE_VERSION": "_wire",
}
__all__ = [
    "AUTOSTART_DIR",
    "BEFORE_KEY",
    "BOOTSTRAP_FAILED",
    "BOOTSTRAP_MODULE",
    "ENV_ALLOC",
    "ENV_EVENTS_DIR",
    "ENV_LINES",
    "ENV_TORCH",
    "EV_ERROR",
    "EV_EXIT",
    "EV_HWM_RESET",
    "EV_METRIC",
    "EV_PHASE_END",
    "EV_PHASE_START",
    "MODULE_NOT_FOUND",
    "PAGE_SIZE",
    "TORCH_MODES",
    "WIRE_VERSION",
    "ClosedPhase",
    "LineData",
    "MemorySource",
    "OpenFiles",
    "OpenPhase",
    "PhaseTracker",
    "ProcSelfSource",
    "RetainedSeries",
    "Sampler",
    "active_sampler",
    "active_torch_tracker",
    "active_tracker",
    "is_library",
    "is_own",
    "kill_until_gone",
    "listen_metrics",
    "live_tensors",
    "metrics_from_events",
    "orphaned_entries",
    "parse_high_water",
    "parse_stat",
    "phase",
    "program_environment",
    "read_allocations",
    "read_children",
    "read_cmdline",
    "read_events",
    "read_lines",
    "read_stat",
    "read_torch",
    "record",
    "scan_ppids",
    "set_tracker",
    "source_line",
    "start_sampler",
    "start_tracking",
    "step",
    "stop_tracking",
    "torch_memory",
    "unlisten_metrics",
]
__getattr__, __dir__ = attach(__name__, _NAMES)
