"""The figures of the short run report, computed from a Profile alone."""

from __future__ import annotations

from dataclasses import dataclass

from memgauge.model import PhaseRecord, ProcessRecord, Profile

TYPE_CHECKING = False  # not typing's: the run's report loads this module (docs/benchmarks.md)
if TYPE_CHECKING:
    from memgauge.model import PhaseSummary, RunSummary

_BLOCKS = " ▁▂▃▄▅▆▇█"


@dataclass(frozen=True)
class PhaseRow:
    phase: PhaseRecord
    share: float  # of the run's wall time
    growth_bytes: int  # peak above the resident size at the phase's start


@dataclass(frozen=True)
class PhaseTotal:
    """All the records of one phase name: how many, their summed duration (nested records of one
    name overlap), the highest peak, and whether that peak is only a lower bound (the max of
    figures one of which may be low is itself only a lower bound)."""

    name: str
    count: int
    seconds: float
    peak_bytes: int
    lower_bound: bool


def exit_text(profile: Profile) -> tuple[str, str]:
    """How the program ended, in words, and its tone: "good", "bad", or "" for no verdict."""
    ex = profile.exit
    if ex.stopped_by:
        return f"stopped by memgauge: {ex.stopped_by}", "bad"
    if ex.oom_killed:
        return "killed by the OOM killer", "bad"
    if ex.signal is not None:
        return f"killed by {ex.signal_name or f'signal {ex.signal}'}", "bad"
    if ex.code is None:
        return "in-process", ""
    return f"exit {ex.code}", "good" if ex.code == 0 else "bad"


def phase_rows(profile: Profile) -> list[PhaseRow]:
    """Phases in start order, each with its share of the wall time and its peak growth."""
    wall = profile.wall_seconds or 1.0
    return [
        PhaseRow(
            phase=p,
            share=max(0.0, p.duration_seconds) / wall,
            growth_bytes=p.peak_resident_bytes - p.start_resident_bytes,
        )
        for p in profile.phases
    ]


def phase_totals(profile: Profile) -> list[PhaseTotal]:
    """One entry per phase name, in first-start order: a phase per batch makes thousands of
    records that no table can list one by one."""
    totals: dict[str, PhaseTotal] = {}
    for ph in sorted(profile.phases, key=lambda x: x.start_seconds):
        t = totals.get(ph.name) or PhaseTotal(ph.name, 0, 0.0, 0, False)
        totals[ph.name] = PhaseTotal(
            ph.name,
            t.count + 1,
            t.seconds + max(0.0, ph.duration_seconds),
            max(t.peak_bytes, ph.peak_resident_bytes),
            t.lower_bound or not ph.peak_exact,
        )
    return list(totals.values())


def top_processes(profile: Profile, n: int = 5) -> list[ProcessRecord]:
    """The ``n`` processes with the highest resident peaks."""
    return sorted(profile.processes, key=lambda p: (-p.peak_resident_bytes, p.start_seconds))[:n]


def sparkline(values: list[int] | list[float], width: int = 60, top: float | None = None) -> str:
    """One line of block characters; each column shows the maximum of the samples it covers."""
    if not values or width <= 0:
        return ""
    columns: list[float] = []
    n = len(values)
    for c in range(min(width, n)):
        lo = c * n // min(width, n)
        hi = max(lo + 1, (c + 1) * n // min(width, n))
        columns.append(max(values[lo:hi]))
    scale = top if top else max(columns)
    if scale <= 0:
        return _BLOCKS[0] * len(columns)
    steps = len(_BLOCKS) - 1
    return "".join(_BLOCKS[max(0, min(steps, round(v / scale * steps)))] for v in columns)


def summarize(profile: Profile) -> RunSummary:
    """What a sweep keeps of one run's profile."""
    # the sweep's records (with pathlib, urllib and ipaddress) load here, for a sweep: not with
    # every run's terminal report, which reads this module's other figures
    from memgauge.model import PhaseSummary, RunSummary

    phases: dict[str, PhaseSummary] = {}
    for ph in sorted(profile.phases, key=lambda p: p.start_seconds):
        seen = phases.get(ph.name)
        phases[ph.name] = PhaseSummary(
            seconds=(seen.seconds if seen else 0.0) + max(0.0, ph.end_seconds - ph.start_seconds),
            peak_bytes=max(seen.peak_bytes if seen else 0, ph.peak_resident_bytes),
            depth=min(seen.depth if seen else ph.depth, ph.depth),
        )
    text, _ = exit_text(profile)
    return RunSummary(
        ok=profile.exit.code == 0 and not profile.exit.stopped_by,
        exit=text,
        rss_bytes=profile.peak.resident_bytes,
        needs_bytes=profile.peak.needs_bytes,
        wall_seconds=profile.wall_seconds,
        cpu_seconds=profile.cpu.user_seconds + profile.cpu.system_seconds,
        phases=phases,
        metrics=dict(profile.metrics),
    )
