"""Profiles built to order for tests: one factory with defaults for every field, so a test states
only what it is about (a peak, some lines, a phase) and every test builds records the same way."""

from __future__ import annotations

from typing import Any

from memgauge.model import (
    Attribution,
    CpuTimes,
    ExitStatus,
    LineStats,
    Peak,
    PhaseRecord,
    ProcessRecord,
    Profile,
)
from memgauge.sections.torch import TorchMemory, TorchStep

MIB = 1 << 20


def make_profile(
    *,
    command: list[str] | None = None,
    exit: ExitStatus | None = None,
    wall: float = 10.0,
    cpu: tuple[float, float] = (0.0, 0.0),
    rss: int | None = None,
    method: str = "",
    at: float | None = None,
    attribution: list[Attribution] | None = None,
    notes: list[str] | None = None,
    peaks: dict[int, int] | None = None,
    **fields: Any,
) -> Profile:
    """A run of ``wall`` seconds using ``cpu`` (user, system) seconds that exited 0. ``peaks`` (pid ->
    resident bytes) adds one process record per pid; the tree's peak ``rss`` defaults to their sum.
    Any other ``Profile`` field (``phases``, ``lines``, ``imports``, ``timeline``, ...) passes
    through."""
    command = command or ["python", "main.py"]
    peaks = peaks or {}
    processes = fields.pop("processes", None)
    if processes is None:
        processes = [
            ProcessRecord(
                pid=pid,
                ppid=None,
                cmdline=list(command),
                start_seconds=0.0,
                end_seconds=wall,
                peak_resident_bytes=peak,
            )
            for pid, peak in peaks.items()
        ]
    return Profile(
        command=command,
        exit=exit if exit is not None else ExitStatus(code=0),
        wall_seconds=wall,
        cpu=CpuTimes(*cpu),
        peak=Peak(
            resident_bytes=sum(peaks.values()) if rss is None else rss,
            method=method,
            at_seconds=at,
            attribution=attribution or [],
            notes=notes or [],
        ),
        processes=processes,
        **fields,
    )


def held(
    file: str,
    line: int,
    size: int,
    *,
    source: str = "",
    pid: int = 1,
    function: str = "f",
    stack: list[str] | None = None,
) -> Attribution:
    """``size`` bytes of the resident peak held by ``file:line``."""
    return Attribution(
        pid=pid, file=file, line=line, function=function, bytes=size, stack=stack or [], source=source
    )


def phase(
    name: str,
    start: float,
    end: float,
    peak: int,
    *,
    pid: int = 1,
    depth: int = 0,
    parent: int | None = None,
    exact: bool = True,
) -> PhaseRecord:
    """A phase of ``pid`` from ``start`` to ``end`` seconds peaking at ``peak`` bytes."""
    return PhaseRecord(name, pid, start, end, peak, depth=depth, parent=parent, peak_exact=exact)


def ran(
    file: str,
    line: int,
    *,
    pid: int = 1,
    function: str = "f",
    py: float = 0.0,
    native: float = 0.0,
    wait: float = 0.0,
    growth: int = 0,
    samples: int = 1,
) -> LineStats:
    """A line's sampled statistics: ``py``/``native``/``wait`` seconds and resident ``growth``."""
    return LineStats(
        pid=pid,
        file=file,
        line=line,
        function=function,
        cpu_python_seconds=py,
        cpu_native_seconds=native,
        wait_seconds=wait,
        resident_growth_bytes=growth,
        samples=samples,
    )


def legacy_profile(data: dict[str, Any], version: int) -> dict[str, Any]:
    """``data``, a profile as memgauge writes it now, laid out as versions 1-7 were: no envelope
    header, the version under ``schema_version``. Dropping the fields that version lacked is the
    caller's part."""
    rest = {k: v for k, v in data.items() if k not in ("format", "version")}
    return {"schema_version": version, **rest}


def torch_run(peak: int, seconds: list[float], activations: int = 0) -> TorchMemory:
    """A run's torch part: a tensor peak, steps of these durations each reaching it, and the
    roles at the peak (the gradients, 10 MiB, exist after each backward, not at the peak: set to
    None before forward)."""
    roles = {"parameters": 10 * MIB, "gradients": 0, "activations": activations}
    steps = [
        TorchStep(index=i, start_seconds=float(i), seconds=s, peak_bytes=peak) for i, s in enumerate(seconds)
    ]
    most = {**roles, "gradients": 10 * MIB}
    return TorchMemory(
        mode="summary", pid=1, peak_bytes=peak, peak_by_role=roles, max_by_role=most, steps=steps
    )
