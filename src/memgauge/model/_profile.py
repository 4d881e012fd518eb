"""The ``Profile``: one versioned, serialisable record of a run.

It is the seam between capture and everything after it: capture builds one, analyses and renderers
only read one. Plain data only (numbers, strings, lists), so ``to_dict`` is ``json.dumps``-ready and
``from_dict(to_dict(p)) == p``. The schema is documented in ``docs/profile-schema.md`` and
``docs/profile.schema.json``; it is written in the envelope every record has (``_envelope.py``),
whose version is bumped by any change of layout.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field, fields

from memgauge._errors import ProfileFormatError
from memgauge._files import write_output
from memgauge.model._envelope import PROFILE
from memgauge.model._lines import HeldLine, ImportRecord, LeakSuspect, LineStats
from memgauge.model._overhead import Overhead
from memgauge.model._peak import Attribution, Peak

TYPE_CHECKING = False  # not typing's: a run imports no typing (docs/benchmarks.md)
if TYPE_CHECKING:
    from typing import Any

    # loaded with the first record that has them (_section_parts)
    from memgauge.sections.gpu import GpuDevice
    from memgauge.sections.torch import TorchMemory
    from memgauge.sections.training import Training

SCHEMA_VERSION = PROFILE.version
# versions from_dict reads: a v1 profile (before line attribution) reads with those parts empty, a
# v2 one (before enforced limits) without exit.stopped_by, a v3 one (before program metrics) without
# metrics, a v4 one (before capture warnings) without warnings, a v5 one (before what a container
# needs) without peak.needs_* and peak.page_cache_bytes, a v6 one (before memgauge's own cost)
# without overhead; v1-v7 named their version "schema_version", v8 is the envelope's header
READABLE_VERSIONS = tuple(range(1, SCHEMA_VERSION + 1))
# in peak.notes when sampling missed part of the tree, so error_bound_bytes bounds nothing
UNBOUNDED_NOTE = "some processes were seen in a sampled sum but have no record: the error bound is unknown"

__all__ = [
    "SCHEMA_VERSION",
    "UNBOUNDED_NOTE",
    "AllocationPeak",
    "Attribution",
    "CaptureWarning",
    "CpuTimes",
    "ExitStatus",
    "HeldLine",
    "ImportRecord",
    "LeakSuspect",
    "LineStats",
    "Peak",
    "PhaseRecord",
    "ProcessRecord",
    "ProcessSeries",
    "Profile",
    "Reconciliation",
    "Timeline",
    "load_profile",
]


@dataclass
class ExitStatus:
    """How the measured program ended. ``code`` is None when it died by a signal. ``stopped_by``
    says why memgauge stopped it (an enforced limit), None when it did not."""

    code: int | None = None
    signal: int | None = None
    signal_name: str | None = None
    oom_killed: bool = False
    stopped_by: str | None = None


@dataclass
class CpuTimes:
    user_seconds: float = 0.0
    system_seconds: float = 0.0


@dataclass
class ProcessRecord:
    pid: int
    ppid: int | None
    cmdline: list[str]
    start_seconds: float
    end_seconds: float | None
    peak_resident_bytes: int
    cpu_user_seconds: float = 0.0
    cpu_system_seconds: float = 0.0
    peak_exact: bool = False


@dataclass
class PhaseRecord:
    """A named span of a run. ``peak_resident_bytes`` is the resident peak of process ``pid`` while
    the phase was open; it is exact when ``peak_exact`` (VmHWM reset at the phase start, or VmHWM
    grew during the phase), else a lower bound."""

    name: str
    pid: int
    start_seconds: float
    end_seconds: float
    peak_resident_bytes: int
    start_resident_bytes: int = 0
    end_resident_bytes: int = 0
    depth: int = 0
    parent: int | None = None
    thread: str = ""
    peak_exact: bool = True
    complete: bool = True
    # the process's I/O in the phase (/proc/self/io at its start and end; None: not read, as in
    # memgauge.profile() blocks and incomplete phases): rchar/wchar every read and write call,
    # read_bytes/write_bytes what reached storage
    rchar: int | None = None
    wchar: int | None = None
    read_bytes: int | None = None
    write_bytes: int | None = None

    @property
    def duration_seconds(self) -> float:
        return self.end_seconds - self.start_seconds


# a phase's I/O counters (``PhaseRecord``), left out of the JSON where they were not read
PHASE_IO = ("rchar", "wchar", "read_bytes", "write_bytes")


@dataclass
class ProcessSeries:
    """Resident bytes of one process at timeline samples ``start_index .. start_index+len-1``."""

    pid: int
    start_index: int
    resident_bytes: list[int]


@dataclass
class Timeline:
    """Samples over time. Columns are aligned with ``t_seconds``; a thinned sample holds the maximum
    of the resident values it merged, so spikes stay visible."""

    interval_seconds: float = 0.0
    t_seconds: list[float] = field(default_factory=list)
    tree_resident_bytes: list[int] = field(default_factory=list)
    cgroup_bytes: list[int] | None = None
    cpu_user_seconds: list[float] = field(default_factory=list)
    cpu_system_seconds: list[float] = field(default_factory=list)
    processes: list[ProcessSeries] = field(default_factory=list)


@dataclass
class AllocationPeak:
    """With ``--alloc``: the peak of live heap allocations (memray), per process, and the lines
    holding them at that moment. ``bytes`` sums the processes' own allocation peaks."""

    bytes: int = 0
    processes: dict[str, int] = field(default_factory=dict)
    attribution: list[Attribution] = field(default_factory=list)


@dataclass
class Reconciliation:
    """Why a process's resident peak and allocation peak differ:
    ``resident_peak = baseline + (allocation_peak - untouched) + other``."""

    pid: int
    resident_peak_bytes: int
    allocation_peak_bytes: int
    baseline_bytes: int
    untouched_bytes: int
    other_bytes: int
    notes: list[str] = field(default_factory=list)


@dataclass
class CaptureWarning:
    """A file the measured processes wrote that the profile could not use, whole or in part:
    ``file`` is its name in the events directory, ``message`` what was wrong and what was lost."""

    file: str
    message: str


@dataclass
class Profile:
    command: list[str]
    exit: ExitStatus
    wall_seconds: float
    cpu: CpuTimes
    peak: Peak
    processes: list[ProcessRecord] = field(default_factory=list)
    phases: list[PhaseRecord] = field(default_factory=list)
    timeline: Timeline = field(default_factory=Timeline)
    environment: dict[str, Any] = field(default_factory=dict)
    lines: list[LineStats] = field(default_factory=list)
    imports: list[ImportRecord] = field(default_factory=list)
    leaks: list[LeakSuspect] = field(default_factory=list)
    allocation_peak: AllocationPeak | None = None
    reconciliation: list[Reconciliation] = field(default_factory=list)
    started_at: str = ""
    memgauge_version: str = ""
    # what the program recorded with memgauge.record(name, value): the last value of each process,
    # summed over the processes that recorded it
    metrics: dict[str, float] = field(default_factory=dict)
    # what capture wrote and could not be read: the profile lacks that part (never left out unsaid)
    warnings: list[CaptureWarning] = field(default_factory=list)
    # tensor memory by role, module and step (docs/torch.md); None: torch never imported, or --torch=off
    torch: TorchMemory | None = None
    # what the processes still held at exit, by line, largest first (empty: no line samples)
    held_at_exit: list[HeldLine] = field(default_factory=list)
    # why growth was not judged for leaks (a run too short), "" when it was
    leak_note: str = ""
    # GPU memory per device, in four layers (docs/gpu.md); empty: no GPU seen
    gpu: list[GpuDevice] = field(default_factory=list)
    # a loop's throughput and what bounds it (docs/training.md); None: no steps
    training: Training | None = None
    # what measuring cost: memgauge's steps around the program, its own CPU; None: not measured
    overhead: Overhead | None = None
    # the version of the layout this object is in: always the current one (an older record reads
    # into it); written as the envelope's "version"
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        del data["schema_version"]
        # optional: absent when empty, so profiles without them read and write as before
        for name in ("torch", "held_at_exit", "leak_note", "gpu", "training", "overhead"):
            if not data.get(name):
                data.pop(name, None)
        for line in data["lines"]:  # GPU time per line: absent where no GPU was sampled
            for name in ("gpu_seconds", "gpu_busy"):
                if line.get(name) is None:
                    line.pop(name, None)
        for phase in data["phases"]:  # a phase's I/O: absent where it was not read
            for name in PHASE_IO:
                if phase.get(name) is None:
                    phase.pop(name, None)
        return PROFILE.wrap(data)

    def to_json(self, *, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the profile as JSON, atomically: a crash never leaves half a file."""
        write_output(os.fspath(path), self.to_json(), "profile")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Profile:
        data = PROFILE.open(data)[1]
        unknown = set(data) - {f.name for f in fields(cls)} - {"schema_version"}
        if unknown:
            raise ProfileFormatError(f"malformed memgauge profile: unknown fields {sorted(unknown)}")
        try:
            tl = dict(data.get("timeline") or {})
            tl["processes"] = [ProcessSeries(**s) for s in tl.get("processes", [])]
            peak = dict(data["peak"])
            peak["attribution"] = [Attribution(**a) for a in peak.get("attribution", [])]
            alloc = data.get("allocation_peak")
            if alloc is not None:
                alloc = dict(alloc)
                alloc["attribution"] = [Attribution(**a) for a in alloc.get("attribution", [])]
            return cls(
                command=list(data["command"]),
                exit=ExitStatus(**data["exit"]),
                wall_seconds=_finite(data["wall_seconds"]),
                cpu=CpuTimes(**data["cpu"]),
                peak=Peak(**peak),
                processes=[ProcessRecord(**p) for p in data.get("processes", [])],
                phases=[PhaseRecord(**p) for p in data.get("phases", [])],
                timeline=Timeline(**tl),
                environment=dict(data.get("environment", {})),
                lines=[LineStats(**x) for x in data.get("lines", [])],
                imports=[ImportRecord(**x) for x in data.get("imports", [])],
                leaks=[LeakSuspect(**x) for x in data.get("leaks", [])],
                allocation_peak=AllocationPeak(**alloc) if alloc is not None else None,
                reconciliation=[Reconciliation(**x) for x in data.get("reconciliation", [])],
                started_at=str(data.get("started_at", "")),
                memgauge_version=str(data.get("memgauge_version", "")),
                metrics={str(k): _finite(v) for k, v in dict(data.get("metrics") or {}).items()},
                warnings=[CaptureWarning(**w) for w in data.get("warnings", [])],
                held_at_exit=[HeldLine(**x) for x in data.get("held_at_exit", [])],
                leak_note=str(data.get("leak_note", "")),
                overhead=Overhead.from_dict(data["overhead"]) if data.get("overhead") is not None else None,
                schema_version=SCHEMA_VERSION,
                **_section_parts(data),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ProfileFormatError(f"malformed memgauge profile: {e}") from e

    @classmethod
    def from_json(cls, text: str) -> Profile:
        try:
            # NaN and Infinity are not JSON (to_json never writes them); Python's reader takes
            # them, and every report would then fail on them as an internal error
            data = json.loads(text, parse_constant=_not_a_number)
        except json.JSONDecodeError as e:
            raise ProfileFormatError(f"profile is not valid JSON: {e}") from e
        return cls.from_dict(data)


def _finite(value: Any) -> float:
    # float() takes "nan" and "inf" too
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{value!r} is not a finite number")
    return number


def _not_a_number(name: str) -> Any:
    raise ProfileFormatError(f"profile is not valid JSON: {name} is not a number in JSON")


def load_profile(path: str | os.PathLike[str]) -> Profile:
    """Read a profile written by ``memgauge run --json`` or ``Profile.save``."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ProfileFormatError(f"cannot read profile {path}: {e.strerror or e}") from e
    return Profile.from_json(text)


def _section_parts(data: dict[str, Any]) -> dict[str, Any]:
    """The sections' parts of a profile (torch, gpu, training: the registry's "record" parts), each
    loaded with the first record that has it: their dataclasses cost ~15 ms to create, and most
    runs have none of them."""
    from memgauge.sections import SECTIONS

    return {
        spec.field: spec.part("record")(data[spec.field])
        for spec in SECTIONS
        if data.get(spec.field) not in (None, [])
    }
