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

# what bounds a loop: waiting for data is at least half of its steps' time, or less than half, or
# no batch was seen being fetched (no DataLoader, no ``memgauge.timed_iter``), so it is not known
BOUNDS = ("data", "compute", "unknown")


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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainingProcess:
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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Training:
        data = dict(data)
        for name in ("step_seconds", "samples_per_step", "wait_share_per_step"):
            if data.get(name) is not None:
                data[name] = TrainingStat.from_dict(data[name])
        data["counters"] = [TrainingCounter.from_dict(c) for c in data.get("counters", [])]
        data["rows"] = [TrainingStep.from_dict(r) for r in data.get("rows", [])]
        data["processes"] = [TrainingProcess.from_dict(p) for p in data.get("processes", [])]
        return cls(**data)
