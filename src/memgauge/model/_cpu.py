"""CPU utilisation over a run, per core of the machine and per process of the run, as the watcher
samples it (``watcher/_cpu.py``): the record the training section's loop figures read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class CpuProcessSeries:
    """One process's CPU use and I/O over time: from interval ``start_index`` on, the CPU seconds
    it used per second of each interval (1.0: one core busy; above 1 with several busy threads)."""

    pid: int
    start_index: int
    cores: list[float] = field(default_factory=list)
    # bytes read and written through calls (rchar, wchar of /proc/PID/io) per second of each
    # interval from ``start_index`` on (empty where the watcher could not read the counters), and
    # the counters it read last (None: never read)
    read_per_second: list[float] = field(default_factory=list)
    written_per_second: list[float] = field(default_factory=list)
    rchar: int | None = None
    wchar: int | None = None
    read_bytes: int | None = None
    write_bytes: int | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CpuProcessSeries:
        return cls(**data)


@dataclass
class CpuUsage:
    """CPU utilisation over the run, sampled by the watcher every ``interval_seconds`` (doubled as
    the run grows, so that the series stay short): ``t_seconds`` is each interval's end (seconds
    from the run's start); ``cores`` one series per CPU of the machine (``/proc/stat``: its busy
    share 0..1 of each interval, every program on the machine counted); ``processes`` the run's
    processes (``/proc/PID/stat``)."""

    interval_seconds: float
    t_seconds: list[float] = field(default_factory=list)
    cores: list[list[float]] = field(default_factory=list)
    processes: list[CpuProcessSeries] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CpuUsage:
        data = dict(data)
        data["processes"] = [CpuProcessSeries.from_dict(p) for p in data.get("processes", [])]
        return cls(**data)
