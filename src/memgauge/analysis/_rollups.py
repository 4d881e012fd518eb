"""Line figures summed per function and per file, across the run's processes."""

from __future__ import annotations

from dataclasses import dataclass

from memgauge.model import Profile


@dataclass(frozen=True)
class Rollup:
    """``function`` is empty for a per-file rollup. ``peak_bytes`` is what the rolled-up lines
    held at the resident peak (``peak.attribution``)."""

    file: str
    function: str
    cpu_python_seconds: float
    cpu_native_seconds: float
    wait_seconds: float
    resident_growth_bytes: int
    peak_bytes: int
    lines: int
    contention_seconds: float = 0.0  # runnable, queued for a CPU: not in wait_seconds

    @property
    def cpu_seconds(self) -> float:
        return self.cpu_python_seconds + self.cpu_native_seconds

    @property
    def total_seconds(self) -> float:
        return self.cpu_seconds + self.wait_seconds + self.contention_seconds


def rollup(profile: Profile, by: str = "function") -> list[Rollup]:
    """Per-function (``by="function"``) or per-file (``by="file"``) sums of the line figures,
    most sampled time first. A function's lines in several processes (a worker pool) add up."""
    if by not in ("function", "file"):
        raise ValueError(f"rollup by 'function' or 'file', not {by!r}")
    sums: dict[tuple[str, str], list[float]] = {}
    places: dict[tuple[str, str], set[tuple[int, int]]] = {}
    for s in profile.lines:
        key = (s.file, s.function if by == "function" else "")
        acc = sums.setdefault(key, [0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
        acc[5] += s.contention_seconds
        acc[0] += s.cpu_python_seconds
        acc[1] += s.cpu_native_seconds
        acc[2] += s.wait_seconds
        acc[3] += s.resident_growth_bytes
        places.setdefault(key, set()).add((s.pid, s.line))
    for a in profile.peak.attribution:
        key = (a.file, a.function if by == "function" else "")
        sums.setdefault(key, [0.0, 0.0, 0.0, 0.0, 0.0, 0.0])[4] += a.bytes
        places.setdefault(key, set()).add((a.pid, a.line))
    rows = [
        Rollup(
            file=file,
            function=function,
            cpu_python_seconds=acc[0],
            cpu_native_seconds=acc[1],
            wait_seconds=acc[2],
            resident_growth_bytes=int(acc[3]),
            peak_bytes=int(acc[4]),
            lines=len({line for _, line in places[(file, function)]}),
            contention_seconds=acc[5],
        )
        for (file, function), acc in sums.items()
    ]
    return sorted(rows, key=lambda r: (-r.total_seconds, -r.peak_bytes, r.file, r.function))
