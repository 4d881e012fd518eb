"""The rows the run reports show besides the ranked lines: the lines worth a "waiting" table, the
busiest lines with what tells two rows of one line apart, the phases with the most time, and the
chart series (CPU cores busy over time, the phases to shade, the processes to draw)."""

from __future__ import annotations

from collections import defaultdict

from memgauge.analysis._lines import LineRow, top_lines
from memgauge.analysis._summary import PhaseTotal, phase_totals
from memgauge.model import PhaseRecord, ProcessSeries, Profile


def cpu_lines(profile: Profile, n: int) -> list[tuple[LineRow, bool]]:
    """The ``n`` lines with most CPU time, each with whether another of them is on the same line
    of the same process (a comprehension and the function around it: their functions tell them
    apart)."""
    rows = top_lines(profile, n, by="cpu")
    places = [(row.stats.pid, row.stats.file, row.stats.line) for row in rows]
    return [(row, places.count((row.stats.pid, row.stats.file, row.stats.line)) > 1) for row in rows]


def waiting_lines(profile: Profile, n: int = 3, *, least_share: float = 0.05) -> list[LineRow]:
    """The ``n`` lines of the program's own code that waited most (I/O, sleep, locks); none where
    the longest wait is under ``least_share`` of the wall time (not worth a table)."""
    waiting = top_lines(profile, n, by="wait", user_only=True)
    if not waiting or waiting[0].stats.wait_seconds < least_share * profile.wall_seconds:
        return []
    return waiting


def longest_phases(profile: Profile, n: int) -> list[PhaseTotal]:
    """The ``n`` phase names with the most time in all, most first (a phase per batch makes more
    names than a table can list)."""
    return sorted(phase_totals(profile), key=lambda t: -t.seconds)[:n]


def cpu_cores(
    t: list[float], user: list[float], system: list[float], wall: float
) -> tuple[list[float], list[float]]:
    """Cores busy over windows of at least 50 ms (and 1/300 of the run), as (window start, cores)
    series, the last window's rate held until the end: CPU clocks tick every 10 ms, so a rate over
    one 10 ms sample is 0 or 2 cores, never the truth."""
    window = max(0.05, wall / 300)
    total = [u + s for u, s in zip(user, system, strict=False)]
    out_t: list[float] = []
    cores: list[float] = []
    last = 0
    for i in range(1, len(total)):
        dt = t[i] - t[last]
        if dt >= window or i == len(total) - 1:
            if dt > 0:
                out_t.append(round(t[last], 3))
                cores.append(round(max(0.0, total[i] - total[last]) / dt, 3))
            last = i
    if out_t:
        out_t.append(round(t[-1], 3))
        cores.append(cores[-1])
    return out_t, cores


def phase_spans(phases: list[PhaseRecord], most: int = 200) -> list[tuple[str, float, float]]:
    """The outermost phases as (name, start, end) spans, in start order. Beyond ``most``, runs of
    one name merge into one span, then the longest spans are kept: a chart shows the shape, a
    table the detail."""
    top = sorted((ph for ph in phases if ph.depth == 0), key=lambda x: x.start_seconds)
    spans = [(ph.name, ph.start_seconds, ph.end_seconds) for ph in top]
    if len(spans) > most:
        merged: list[tuple[str, float, float]] = []
        for name, start, end in spans:
            if merged and merged[-1][0] == name:
                merged[-1] = (name, merged[-1][1], max(merged[-1][2], end))
            else:
                merged.append((name, start, end))
        longest = sorted(merged, key=lambda s: s[1] - s[2])[:most]
        spans = sorted(longest, key=lambda s: s[1])
    return spans


def largest_series(profile: Profile, n: int) -> list[ProcessSeries]:
    """The memory series of the ``n`` processes with the highest samples, in timeline order; none
    for a run of one process (its series is the tree's)."""
    tl = profile.timeline
    if len(tl.processes) <= 1:
        return []
    peaks: dict[int, int] = defaultdict(int)
    for s in tl.processes:
        peaks[s.pid] = max(peaks[s.pid], max(s.resident_bytes, default=0))
    keep = set(sorted(peaks, key=lambda pid: -peaks[pid])[:n])
    return [s for s in tl.processes if s.pid in keep and s.resident_bytes]
