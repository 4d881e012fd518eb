"""A run's records by line of the program: where each line's time and growth went (``LineStats``),
the imports' cost (``ImportRecord``), the lines whose memory kept growing (``LeakSuspect``) and
those still holding memory at exit (``HeldLine``), all from the line sampler."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class LineStats:
    """Where the time of one line of one process went, from sampling. Times are seconds summed over
    the process's threads; ``resident_growth_bytes`` is the net change of the process's resident
    memory while the line ran (negative where it released memory)."""

    pid: int
    file: str
    line: int
    function: str
    cpu_python_seconds: float = 0.0
    cpu_native_seconds: float = 0.0
    wait_seconds: float = 0.0
    resident_growth_bytes: int = 0
    samples: int = 0
    source: str = ""
    contention_seconds: float = 0.0  # runnable, queued for a CPU: not in wait_seconds
    # NVML's utilisation while the line ran (analysis.gpu_time_per_line): device-seconds a kernel
    # ran, and their mean percent; None (absent in the JSON) where no GPU was sampled
    gpu_seconds: float | None = None
    gpu_busy: float | None = None


@dataclass
class ImportRecord:
    """The first import of a top-level package in process ``pid``: time and resident growth,
    including the packages it imported first (``self_*`` excludes those)."""

    pid: int
    package: str
    start_seconds: float
    seconds: float
    resident_bytes: int
    self_seconds: float
    self_resident_bytes: int


@dataclass
class LeakSuspect:
    """A line whose retained resident memory kept growing, without release, until the end."""

    pid: int
    file: str
    line: int
    function: str
    rate_bytes_per_second: float
    retained_bytes: int
    first_seconds: float
    last_seconds: float
    fit_r2: float
    source: str = ""


@dataclass
class HeldLine:
    """Resident memory process ``pid`` still held at its last line sample (its exit, for a process
    that ended normally), charged to the line whose growth it is (``file:line``)."""

    pid: int
    file: str
    line: int
    function: str
    bytes: int
    source: str = ""
