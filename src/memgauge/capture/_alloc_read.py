"""Reading what ``_alloc`` left in the events directory after the program ended (the files
``_wire`` names): each process's allocation peak, the lines holding the live allocations at that
peak, and how the process's resident peak splits against it (see ``Reconciliation``). A capture or
baseline that cannot be read is named in the profile's warnings."""

from __future__ import annotations

import functools
import json
import linecache
import os
import runpy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from memgauge.capture._frames import is_library, is_own
from memgauge.capture._lines_read import HELD_MIN_BYTES
from memgauge.capture._wire import (
    ALLOC_BASELINE,
    ALLOC_CAPTURE,
    BASELINE_FIELDS,
    file_name,
    open_record,
    pid_of,
    problem,
)
from memgauge.model import AllocationPeak, Attribution, CaptureWarning, HeldLine, Reconciliation

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

__all__ = ["Allocations", "read_allocations"]

# pseudo-files: allocations made with no Python frame on the stack, and those made by memgauge's own
# code with no frame of the program's (the bootstrap running the program, the samplers)
NATIVE_FILE = "<native>"
OWN_FILE = "<memgauge>"
# the bootstrap runs the program with runpy: its frames are the bootstrap's, never the program's
_RUNPY = frozenset({"<frozen runpy>", runpy.__file__ or ""})
_OWN, _HIDDEN, _LIBRARY, _USER = range(4)
MAX_STACK = 16
# memray's default interval between the memory snapshots it records (rss and live heap)
SNAPSHOT_INTERVAL_MS = 10
# snapshots holding at least this share of the largest live heap any snapshot saw count as "at the
# peak": small allocations come and go around a plateau
_PLATEAU = 0.99
# the kernel's resident counters are per-CPU and read approximately: a shortfall this small is noise
_COUNTER_SLACK = 4 << 20

_Frame = tuple[str, str, int]  # memray's (function, file, line), innermost first


class Allocations(NamedTuple):
    """What ``read_allocations`` found: the allocation peak (None: no capture could be read), the
    reconciliation per process, and per process (pid) the lines of its allocations live at exit."""

    peak: AllocationPeak | None
    reconciliation: list[Reconciliation]
    live_at_exit: dict[int, list[HeldLine]]


@dataclass
class _Line:
    pid: int
    file: str
    line: int
    function: str
    bytes: int = 0
    # the callers of the largest record charged to this line
    stack: list[str] = field(default_factory=list)
    largest: int = -1

    def source(self) -> str:
        return linecache.getline(self.file, self.line).strip() if self.line > 0 else ""


@dataclass
class _Capture:
    pid: int
    peak: int
    records: list[tuple[int, list[_Frame]]]
    # (rss, heap) at each of memray's memory snapshots
    snapshots: list[tuple[int, int]]
    # the allocations still live when the tracker stopped (the process's exit)
    leaked: list[tuple[int, list[_Frame]]] = field(default_factory=list)


def read_allocations(
    directory: str,
    resident_peaks: dict[int, int],
    *,
    lib: bool = False,
    top: int = 50,
    warnings: list[CaptureWarning] | None = None,
) -> Allocations:
    """The allocation peak of the processes that wrote captures under ``directory``, for those
    with a resident peak in ``resident_peaks`` (pid to VmHWM bytes) the reconciliation of the two,
    and what each process's allocations live at exit were made by. ``peak`` None when no process
    wrote a readable capture. A file that cannot be used is appended
    to ``warnings`` (the profile's; None only where no profile is made)."""
    sink: list[CaptureWarning] = warnings if warnings is not None else []
    paths = _capture_paths(directory)
    if not paths:
        return Allocations(None, [], {})
    captures = [c for c in (_read_capture(pid, path, sink) for pid, path in sorted(paths.items())) if c]
    if not captures:
        return Allocations(None, [], {})
    lines: dict[tuple[int, str, int], _Line] = {}
    for capture in captures:
        for size, frames in capture.records:
            _charge(lines, capture.pid, size, frames, lib=lib)
    ranked = sorted(lines.values(), key=lambda x: (-x.bytes, x.pid, x.file, x.line))[: max(top, 0)]
    peak = AllocationPeak(
        bytes=sum(c.peak for c in captures),
        processes={str(c.pid): c.peak for c in captures},
        attribution=[
            Attribution(
                pid=x.pid,
                file=x.file,
                line=x.line,
                function=x.function,
                bytes=x.bytes,
                stack=x.stack,
                source=x.source(),
            )
            for x in ranked
        ],
    )
    reconciliation = [
        _reconcile(c, resident_peaks[c.pid], _baseline(directory, c.pid, sink))
        for c in captures
        if c.pid in resident_peaks
    ]
    return Allocations(peak, reconciliation, _live_at_exit(captures, lib))


def _live_at_exit(captures: Sequence[_Capture], lib: bool) -> dict[int, list[HeldLine]]:
    """Per process, what its allocations still live at its exit were made by, by line, largest
    first: the line that made what is still alive, which the resident ledger can only guess (it
    takes a release from the newest growth: memory_profiler's example frees ``b`` and keeps ``s``,
    and the ledger named ``b``)."""
    out: dict[int, list[HeldLine]] = {}
    for capture in captures:
        lines: dict[tuple[int, str, int], _Line] = {}
        for size, frames in capture.leaked:
            _charge(lines, capture.pid, size, frames, lib=lib)
        out[capture.pid] = [
            HeldLine(
                pid=x.pid,
                file=x.file,
                line=x.line,
                function=x.function,
                bytes=x.bytes,
                source=x.source(),
            )
            for x in sorted(lines.values(), key=lambda x: (-x.bytes, x.file, x.line))
            if x.bytes >= HELD_MIN_BYTES  # as the resident ledger's rows: start-up, small objects
        ]
    return out


def _capture_paths(directory: str) -> dict[int, str]:
    try:
        names = os.listdir(directory)
    except OSError:
        return {}
    pids = ((pid_of(name, ALLOC_CAPTURE), name) for name in names)
    # memray opens the file itself: only regular ones (a FIFO the program left would block it)
    found = {pid: os.path.join(directory, name) for pid, name in pids if pid is not None}
    return {pid: path for pid, path in found.items() if os.path.isfile(path)}


def _read_capture(pid: int, path: str, warnings: list[CaptureWarning]) -> _Capture | None:
    """None for a file a process never finished: it was killed, or exec'd, before its tracker
    stopped (the aggregated format writes everything at the stop)."""
    import memray

    try:
        with memray.FileReader(path) as reader:
            peak = int(reader.metadata.peak_memory)
            records = [
                (int(r.size), list(r.stack_trace()))
                for r in reader.get_high_watermark_allocation_records(merge_threads=True)
                if r.size > 0
            ]
            snapshots = [(int(s.rss), int(s.heap)) for s in reader.get_memory_snapshots()]
            leaked = [
                (int(r.size), list(r.stack_trace()))
                for r in reader.get_leaked_allocation_records(merge_threads=True)
                if r.size > 0
            ]
    # an unfinished file fails in ways memray does not document (OSError for a short header, others
    # for a torn body)
    except Exception as e:
        warnings.append(
            CaptureWarning(
                os.path.basename(path),
                f"memray could not read it ({type(e).__name__}): the process ended before its tracker "
                "wrote the capture (killed, or exec'd), and its allocations are missing",
            )
        )
        return None
    return _Capture(pid, peak, records, snapshots, leaked)


@functools.cache
def _kind(filename: str) -> int:
    """_OWN, _HIDDEN (the bootstrap's runpy), _LIBRARY or _USER: memray repeats the same few
    hundred files across every record's stack."""
    if is_own(filename):
        return _OWN
    if filename in _RUNPY:
        return _HIDDEN
    return _LIBRARY if is_library(filename) else _USER


def _charge(
    lines: dict[tuple[int, str, int], _Line], pid: int, size: int, stack: Sequence[_Frame], *, lib: bool
) -> None:
    callers: list[_Frame] = []
    kinds = [_kind(f[1]) for f in stack]
    own = _OWN in kinds
    frames = [f for f, k in zip(stack, kinds, strict=True) if k >= _LIBRARY] or list(stack)
    user = next((i for i, f in enumerate(frames) if _kind(f[1]) == _USER), None)
    if not stack:
        key, function = (pid, NATIVE_FILE, 0), ""
    elif user is None and own:
        key, function = (pid, OWN_FILE, 0), ""
    else:
        # no user frame at all (a library's own thread): its innermost frame says more than nothing
        at = 0 if lib or user is None else user
        function, file, line = frames[at]
        key = (pid, file, line)
        callers = [f for f in frames[at + 1 :] if lib or _kind(f[1]) == _USER]
    entry = lines.get(key)
    if entry is None:
        entry = lines[key] = _Line(pid, key[1], key[2], function)
    entry.bytes += size
    if size > entry.largest:
        entry.largest = size
        entry.stack = [f"{f[1]}:{f[2]}" for f in reversed(callers[:MAX_STACK])]


def _baseline(directory: str, pid: int, warnings: list[CaptureWarning]) -> int | None:
    """None when the process recorded no baseline (the reconciliation says so in its notes) or the
    file cannot be used (a warning says so too)."""
    name = file_name(ALLOC_BASELINE, pid)
    try:
        with open_record(os.path.join(directory, name)) as f:
            data: Any = json.load(f)
    except FileNotFoundError:
        return None
    except OSError as e:
        why: str | None = f"unreadable ({e.strerror or e})"
    except ValueError as e:
        why = f"not JSON ({e})"
    else:
        why = problem(data, BASELINE_FIELDS)
    if why is not None:
        warnings.append(
            CaptureWarning(name, f"{why}: the reconciliation uses memray's first snapshot instead")
        )
        return None
    return int(data["baseline"])


def _at_peak(snapshots: Iterable[tuple[int, int]]) -> tuple[int, int, int] | None:
    """(rss, heap, count) for the allocation peak: of the snapshots holding (nearly) the largest live
    heap any snapshot saw, the most resident one, since what a program writes into its allocations
    becomes resident after they were made; count is how many such snapshots there were."""
    snaps = [s for s in snapshots if s[0] > 0]
    if not snaps:
        return None
    most = max(h for _, h in snaps)
    plateau = [s for s in snaps if s[1] >= most * _PLATEAU]
    rss, heap = max(plateau)
    return rss, heap, len(plateau)


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{n / 1024:.0f} KiB"


def _reconcile(capture: _Capture, resident: int, baseline: int | None) -> Reconciliation:
    notes: list[str] = []
    a = capture.peak
    if baseline is None or baseline <= 0:
        # memray takes its first snapshot as its tracker starts
        baseline = next((rss for rss, _ in capture.snapshots if rss > 0), 0)
        notes.append(
            "baseline: the resident size at memray's first memory snapshot (no baseline was recorded)"
        )
    at = _at_peak(capture.snapshots)
    if at is None:
        untouched = 0
        notes.append("memray recorded no memory snapshot: untouched allocations could not be estimated")
    else:
        rss, heap, count = at
        untouched = max(0, min(heap, a) - (rss - baseline))
        if heap < a * _PLATEAU:
            notes.append(
                f"the allocation peak lasted less than memray's {SNAPSHOT_INTERVAL_MS} ms between memory "
                f"snapshots: resident size was read at the snapshot holding the most, {_size(heap)} of "
                f"{_size(a)}"
            )
        elif count == 1:
            notes.append(
                f"a single memory snapshot (one every {SNAPSHOT_INTERVAL_MS} ms) fell inside the allocation "
                "peak: allocations still being written then count as untouched"
            )
        if untouched > 0:
            notes.append(
                "untouched = live allocations at the peak minus the resident growth since tracking began; "
                "growth from anything else by then (imported code, allocator overhead) hides as much"
            )
    other = resident - baseline - (a - untouched)
    if other < 0:
        if -other <= max(_COUNTER_SLACK, resident // 100):
            notes.append(
                f"other came out -{_size(-other)}, within the precision of the kernel's resident counters, "
                "and was set to 0"
            )
        else:
            notes.append(
                f"other came out -{_size(-other)} and was set to 0: the resident peak is below the baseline "
                "plus the touched allocations, so untouched is underestimated (resident growth from other "
                "sources hid allocations never written) or the allocations were not all resident at once"
            )
        other = 0
    return Reconciliation(
        pid=capture.pid,
        resident_peak_bytes=resident,
        allocation_peak_bytes=a,
        baseline_bytes=baseline,
        untouched_bytes=untouched,
        other_bytes=other,
        notes=notes,
    )
