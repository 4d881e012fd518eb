"""Measuring one block of the kernel's own process: the resident peak, its increment, the time
and the GPU peak, each with the way it was measured.

Every figure comes from ``memgauge.runner.profile``: the process's ``VmHWM`` (the kernel's exact
high-water mark) reset when the block starts, so the peak is the block's own, however short the
spike; never a poll every 0.1 s. The increment is that peak less the resident size when the block
began, so an allocation after a ``del`` counts in full once its pages are touched: the freed pages
went back to the kernel and the new ones rise above the starting size. (Memory the allocator kept
after a free and hands out again never shows in resident memory: no resident-memory tool can see
it, and memgauge does not pretend to.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memgauge._units import format_bytes, format_seconds
from memgauge.model import Profile
from memgauge.notebook._gpu import GpuMonitor, GpuPeak
from memgauge.runner import profile

MIB = 1 << 20
EXACT = "vmhwm-reset"


@dataclass
class Measured:
    """One run of a block: its profile, what it returned or raised, and its GPU figures."""

    profile: Profile
    start_resident_bytes: int
    value: Any = None
    error: BaseException | None = None
    gpu: GpuPeak | None = None

    @property
    def peak_bytes(self) -> int:
        return self.profile.peak.resident_bytes

    @property
    def increment_bytes(self) -> int:
        return self.profile.peak.resident_bytes - self.start_resident_bytes

    @property
    def end_resident_bytes(self) -> int:
        tree = self.profile.timeline.tree_resident_bytes
        return tree[-1] if tree else self.start_resident_bytes


def measure(
    run: Callable[[], Any],
    *,
    gpu: GpuMonitor,
    children: bool = False,
    lines: bool = False,
    timeline: bool = False,
) -> Measured:
    """Runs ``run()`` once under ``memgauge.profile``; an exception it raises (KeyboardInterrupt
    included) is returned in ``error`` for the caller to re-raise once it has shown what it measured.
    The profile's own threads have stopped by the time this returns, whatever happened."""
    gpu.start()
    value: Any = None
    error: BaseException | None = None
    # the sampling thread only where something needs it: descendants are found by sampling, and
    # a timeline needs samples; the peak itself never does
    with profile(lines=lines, children=children, sample=children or lines or timeline) as prof:
        try:
            value = run()
        except BaseException as e:  # handed back, to be raised again once the report is shown
            error = e
    assert prof.profile is not None  # built by the block's end
    return Measured(prof.profile, prof.start_resident_bytes, value, error, gpu.stop())


def describe_method(p: Profile) -> str:
    """How the peak was measured, in the words a one-line output can afford."""
    peak = p.peak
    if peak.method == EXACT:
        return "exact: VmHWM reset before the run"
    if peak.error_bound_bytes:
        return f"{peak.method}, within {format_bytes(peak.error_bound_bytes)}"
    return peak.method


def mib(n: float) -> str:
    """Sizes as memory_profiler's users read them: MiB with one decimal."""
    return f"{n / MIB:.1f} MiB"


@dataclass
class MemitResult:
    """What ``%memit -o`` / ``%%memit -o`` return. Sizes in bytes.

    ``peak_bytes`` is the highest resident size over all runs, ``baseline_bytes`` the resident
    size before the first, ``increment_bytes`` the difference (memory_profiler's definitions,
    measured exactly). Per-run figures are in ``peaks``, ``increments`` and ``seconds``; each
    run's full ``Profile`` in ``profiles``.
    """

    peak_bytes: int
    increment_bytes: int
    baseline_bytes: int
    peaks: list[int]
    increments: list[int]
    seconds: list[float]
    method: str
    error_bound_bytes: int
    gpu: GpuPeak | None = None
    profiles: list[Profile] = field(default_factory=list, repr=False)

    @classmethod
    def of(cls, runs: list[Measured]) -> MemitResult:
        baseline = runs[0].start_resident_bytes
        top = max(runs, key=lambda m: m.peak_bytes)
        gpus = [m.gpu for m in runs if m.gpu is not None]
        return cls(
            peak_bytes=top.peak_bytes,
            increment_bytes=top.peak_bytes - baseline,
            baseline_bytes=baseline,
            peaks=[m.peak_bytes for m in runs],
            increments=[m.increment_bytes for m in runs],
            seconds=[m.profile.wall_seconds for m in runs],
            method=top.profile.peak.method,
            error_bound_bytes=top.profile.peak.error_bound_bytes,
            gpu=max(gpus, key=lambda g: g.peak_bytes) if gpus else None,
            profiles=[m.profile for m in runs],
        )

    def line(self) -> str:
        """``peak memory: 820.4 MiB, increment: 763.0 MiB`` and how it was measured."""
        runs = len(self.peaks)
        how = "exact: VmHWM reset before each run" if self.method == EXACT else self.method
        if self.method != EXACT and self.error_bound_bytes:
            how += f", within {mib(self.error_bound_bytes)}"
        timing = (
            format_seconds(min(self.seconds)) if runs == 1 else f"best {format_seconds(min(self.seconds))}"
        )
        gpu = f"; {self.gpu.describe()}" if self.gpu is not None else ""
        repeat = f"max of {runs} runs, " if runs > 1 else ""
        return (
            f"peak memory: {mib(self.peak_bytes)}, increment: {mib(self.increment_bytes)}"
            f"{gpu}  ({repeat}{how}; {timing})"
        )

    def __str__(self) -> str:
        return self.line()

    def __repr__(self) -> str:
        return f"<MemitResult : {self.line()}>"

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(repr(self))
