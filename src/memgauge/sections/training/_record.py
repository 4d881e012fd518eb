"""The training part of a ``Profile``: how fast a loop ran, what it waited for, what bounds it.

Optional data (``Profile.training``, None when the program ran no steps and counted nothing),
added without a schema bump. Rates are over the steady steps (warm-up and the FLOP-counted step
left out), per second of those steps' own wall time; ``data_wait_share`` is 0..1; ``mfu`` is None
where the device's peak is unknown. The fields are documented in ``docs/profile-schema.md``
("training") and how they are measured in ``docs/training.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memgauge.model import CpuUsage

# what bounds a loop: waiting for data is at least half of its steps' time, or less than half, or
# no batch was seen being fetched (no DataLoader, no ``memgauge.timed_iter``), so it is not known
# (with NVML: ``host``, the GPU runs kernels less than half the time and data is not what it waits
# for: Python, launches, synchronisations and copies take the time)
BOUNDS = ("data", "compute", "host", "unknown")


@dataclass
class TrainingStep:
    """One step: when it ended (seconds from the run's start), its wall time (None for a first step
    whose start was not seen), the part of it spent waiting for data, its samples (None: unknown),
    its kind (``optimizer`` or ``explicit``), and whether it is warm-up or the FLOP-counted step."""

    index: int
    end_seconds: float
    seconds: float | None
    wait_seconds: float = 0.0
    samples: int | None = None
    kind: str = ""
    warmup: bool = False
    flops_counted: bool = False
    # as the program counts them (``memgauge.step(tokens=n)``); None: not given
    tokens: int | None = None
    # bytes copied host to device and device to host in the step (None: copies not counted)
    h2d_bytes: int | None = None
    d2h_bytes: int | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainingStep:
        return cls(**data)


@dataclass
class TrainingStat:
    """One per-step figure over the steady steps: its median and the 10th and 90th percentiles."""

    median: float
    p10: float
    p90: float

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainingStat:
        return cls(**data)


@dataclass
class TrainingCounter:
    """``memgauge.step(kind)`` events: how many, summed over the processes, and their rate over the
    time from each process's first to its last event."""

    kind: str
    count: int
    per_second: float | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainingCounter:
        return cls(**data)


@dataclass
class TrainingProcess:
    """One process of the run beside the loop: what it is to the loop (``main loop``,
    ``DataLoader worker 0``, "" for another), its CPU seconds (user + system) and their share of its
    lifetime (above 1 with several busy threads), and the kernel's I/O counters at its end where it
    wrote them (None: unknown): ``read_bytes``/``write_bytes`` reached storage, ``rchar``/``wchar``
    went through read and write calls (pipes and the page cache included)."""

    pid: int
    role: str
    command: str
    cpu_seconds: float
    cpu_share: float | None = None
    read_bytes: int | None = None
    write_bytes: int | None = None
    rchar: int | None = None
    wchar: int | None = None
    # what it sent other processes through multiprocessing (queues, pipes, pools; None: nothing
    # counted): pickles and their bytes, and storages handed over in shared memory (torch's
    # tensors) with theirs; the rates are over the process's lifetime
    pickles: int | None = None
    pickled_bytes: int | None = None
    pickled_bytes_per_second: float | None = None
    shared_storages: int | None = None
    shared_bytes: int | None = None
    shared_bytes_per_second: float | None = None
    # rchar and wchar over the process's lifetime (None: counters or lifetime unknown); the
    # counters come from the loop's record at the process's end, else from the watcher's last read
    read_per_second: float | None = None
    written_per_second: float | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainingProcess:
        return cls(**data)


@dataclass
class TrainingCopyLine:
    """A line of the program that copied across devices: ``direction`` (``h2d``, ``d2h``, ``d2d``),
    the bytes that landed on the destination and how many copies."""

    line: str
    direction: str
    bytes: int
    copies: int

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainingCopyLine:
        return cls(**data)


@dataclass
class TrainingCopies:
    """Bytes copied between devices by the loop's process (``Tensor.to``, ``.cuda``, ``.cpu``,
    ``copy_``): totals over the run by direction, how many copies, per steady step (median, p10,
    p90) and per second of the steady steps' time, and the lines that copied most."""

    h2d_bytes: int = 0
    d2h_bytes: int = 0
    d2d_bytes: int = 0
    copies: int = 0
    h2d_bytes_per_step: TrainingStat | None = None
    d2h_bytes_per_step: TrainingStat | None = None
    h2d_bytes_per_second: float | None = None
    d2h_bytes_per_second: float | None = None
    lines: list[TrainingCopyLine] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainingCopies:
        data = dict(data)
        for name in ("h2d_bytes_per_step", "d2h_bytes_per_step"):
            if data.get(name) is not None:
                data[name] = TrainingStat.from_dict(data[name])
        data["lines"] = [TrainingCopyLine.from_dict(r) for r in data.get("lines", [])]
        return cls(**data)


@dataclass
class Training:
    """A loop's throughput over its steps (optimizer steps or ``memgauge.step()``)."""

    steps: int
    steps_per_second: float | None = None
    samples_per_second: float | None = None
    data_wait_share: float | None = None
    flops_per_step: int | None = None
    mfu: float | None = None
    bound: str = ""
    warmup_steps: int = 0
    # tokens over the steady steps' time, where the program counted tokens (``memgauge.step(tokens=n)``)
    tokens_per_second: float | None = None
    # the process whose steps these are (the one with the most), and how many were left unrecorded
    pid: int = 0
    steps_dropped: int = 0
    steady_steps: int = 0
    # per-step figures over the steady steps
    step_seconds: TrainingStat | None = None
    samples_per_step: TrainingStat | None = None
    wait_share_per_step: TrainingStat | None = None
    # where the program counted tokens: tokens per step, and each step's own tokens/s
    tokens_per_step: TrainingStat | None = None
    tokens_per_second_per_step: TrainingStat | None = None
    # what-if rates: steps/s with no data wait, and with free compute (only the wait left)
    steps_per_second_without_data_wait: float | None = None
    steps_per_second_if_compute_free: float | None = None
    # FLOPs: the counted step, the device and dtype that did most of them, achieved and peak FLOP/s
    flops_step: int | None = None
    device: str = ""
    dtype: str = ""
    achieved_flops_per_second: float | None = None
    peak_flops_per_second: float | None = None
    peak_source: str = ""
    # the one sentence saying what matters most (analysis.training_verdict)
    verdict: str = ""
    counters: list[TrainingCounter] = field(default_factory=list)
    # the processes of the run: CPU and I/O, the loop's own and its DataLoader workers named
    processes: list[TrainingProcess] = field(default_factory=list)
    rows: list[TrainingStep] = field(default_factory=list)
    # steady-state CPU (cores busy, 1.0 = one core, over the steady steps' span): the main loop's
    # process, its DataLoader workers together, the machine's cores' mean busy share, and whether
    # that share is at least ``analysis.CPU_SATURATED`` (no idle CPU left); None: not sampled
    cpu_main_loop: float | None = None
    cpu_workers: float | None = None
    cpu_busy_share: float | None = None
    cpu_saturated: bool | None = None
    # the run's CPU utilisation over time (per core, per process), from the watcher
    cpu: CpuUsage | None = None
    # NVML over the steady steps (0..1), on the devices the run used: the share of time kernels ran,
    # and the share of time device memory was read or written; None without NVML samples
    gpu_utilization: float | None = None
    gpu_memory_utilization: float | None = None
    # bytes copied host<->device (None: torch's copy methods not hooked, or nothing crossed)
    copies: TrainingCopies | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Training:
        data = dict(data)
        for name in (
            "step_seconds",
            "samples_per_step",
            "wait_share_per_step",
            "tokens_per_step",
            "tokens_per_second_per_step",
        ):
            if data.get(name) is not None:
                data[name] = TrainingStat.from_dict(data[name])
        data["counters"] = [TrainingCounter.from_dict(c) for c in data.get("counters", [])]
        data["rows"] = [TrainingStep.from_dict(r) for r in data.get("rows", [])]
        data["processes"] = [TrainingProcess.from_dict(p) for p in data.get("processes", [])]
        if data.get("cpu") is not None:
            data["cpu"] = CpuUsage.from_dict(data["cpu"])
        if data.get("copies") is not None:
            data["copies"] = TrainingCopies.from_dict(data["copies"])
        return cls(**data)


def read_part(data: dict[str, Any]) -> Training:
    """The section's part of a profile (``Profile.training``) from its dictionary: the registry's
    "record"."""
    return Training.from_dict(data)
