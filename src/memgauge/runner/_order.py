"""Helpers shared by the in-process recorder and the runner to build a Profile's parts: the phase
tree, the leak suspects found in what the line samplers read (and what is held at exit, and why
growth could not be judged), and the capture warnings."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from memgauge.model import CaptureWarning, HeldLine, LeakSuspect, PhaseRecord

TYPE_CHECKING = False  # not typing's: a run imports no typing (docs/benchmarks.md)
if TYPE_CHECKING:
    from typing import Any

    from memgauge.capture import LineData
    from memgauge.model import AllocationPeak, ProcessRecord, Reconciliation

# capture warnings kept in a profile: a program may write any number of files into the events
# directory, and its profile must stay small
MAX_WARNINGS = 50


def order_phases(entries: list[tuple[Hashable, Hashable | None, PhaseRecord]]) -> list[PhaseRecord]:
    """Sort phases by start time and turn each ``(key, parent_key, record)`` parent key into the
    index of the parent in the returned list."""
    entries = sorted(entries, key=lambda e: (e[2].start_seconds, e[2].depth))
    index = {key: i for i, (key, _, _) in enumerate(entries)}
    out: list[PhaseRecord] = []
    for _, parent_key, record in entries:
        record.parent = index.get(parent_key) if parent_key is not None else None
        out.append(record)
    return out


def leak_suspects_of(data: LineData, t0: float) -> list[LeakSuspect]:
    """The leak suspects of every process whose lines were read, fastest growth first; times are
    seconds since ``t0``."""
    if not data.retained:
        return []  # before the analyses' imports: a run with no line data pays for none of them
    from memgauge.analysis import callers_in, is_import_line, leak_suspects
    from memgauge.capture import source_line

    # seconds each process's threads ran, were queued and waited on each line: a line whose growth
    # took its threads' running time all along is a one-off build, not a leak (``analysis._leaks``)
    seconds: dict[int, dict[tuple[str, int, str], tuple[float, float, float]]] = {}
    for s in data.lines:
        at = seconds.setdefault(s.pid, {})
        key = (s.file, s.line, s.function)
        ran, queued, waited = at.get(key, (0.0, 0.0, 0.0))
        at[key] = (
            ran + s.cpu_python_seconds + s.cpu_native_seconds,
            queued + s.contention_seconds,
            waited + s.wait_seconds,
        )
    out: list[LeakSuspect] = []
    for part in data.retained:
        fits = leak_suspects(
            part.series,
            part.t_end,
            callers_in(part.stacks, part.series),
            stacks=part.stacks,
            seconds_at=seconds.get(part.pid, {}),
        )
        for fit in fits:
            file, line, function = fit.key
            if is_import_line(source_line(file, line)):
                # an import's growth is a library loading (issue 16: "53.9 MiB/s" at an sklearn
                # import), a one-off cost, never a leak
                continue
            out.append(
                LeakSuspect(
                    pid=part.pid,
                    file=file,
                    line=line,
                    function=function,
                    rate_bytes_per_second=round(fit.rate_bytes_per_second, 1),
                    retained_bytes=fit.retained_bytes,
                    first_seconds=round(fit.first_seconds - t0, 4),
                    last_seconds=round(fit.last_seconds - t0, 4),
                    fit_r2=round(fit.r2, 4),
                    source=source_line(file, line),
                )
            )
    out.sort(key=lambda s: -s.rate_bytes_per_second)
    return out


def held_at_exit_of(data: LineData) -> list[HeldLine]:
    """What every process still held at its last sample, by line, largest first; an import line's
    share too (an import's footprint is held to the end)."""
    return list(data.held)


# environment.measurement.held_at_exit where memray's allocations live at exit named the lines
HELD_BY_ALLOCATIONS = "memray: allocations live at exit"


def allocations_of(
    events_dir: str,
    processes: Sequence[ProcessRecord],
    lib: bool,
    warnings: list[CaptureWarning],
    held: list[HeldLine],
    measurement: dict[str, Any],
) -> tuple[AllocationPeak | None, list[Reconciliation], list[HeldLine]]:
    """With ``--alloc``: memray's allocation peak and reconciliation, and what is held at exit.
    Each process memray followed is held at exit by the lines that made its allocations still live
    then, not by the resident ledger's guess (``measurement`` says so); the others keep the
    ledger's rows."""
    from memgauge.capture import read_allocations

    peak, reconciliation, live = read_allocations(
        events_dir, {p.pid: p.peak_resident_bytes for p in processes}, lib=lib, warnings=warnings
    )
    if live:
        held = [h for h in held if h.pid not in live] + [h for rows in live.values() for h in rows]
        held.sort(key=lambda h: -h.bytes)
        measurement["held_at_exit"] = HELD_BY_ALLOCATIONS
    return peak, reconciliation, held


def leak_note_of(data: LineData) -> str:
    """Why growth was not judged, "" when it was: no process sampled its lines long enough for a
    steady growth to be told from a one-off one (issue 16: a 0.3 s script keeping 400 MiB)."""
    from memgauge.analysis import LEAK_MIN_SPAN_SECONDS

    spans = [p.t_end - p.t_start for p in data.retained if p.t_start is not None]
    if not spans or max(spans) >= LEAK_MIN_SPAN_SECONDS:
        return ""
    return (
        f"too short to judge growth: lines sampled for {max(spans):.2f} s, under the "
        f"{LEAK_MIN_SPAN_SECONDS:g} s a leak must grow for; see what is held at exit"
    )


def capped(warnings: Sequence[CaptureWarning]) -> list[CaptureWarning]:
    """At most ``MAX_WARNINGS``, the last of them counting the files left out."""
    if len(warnings) <= MAX_WARNINGS:
        return list(warnings)
    kept = list(warnings[: MAX_WARNINGS - 1])
    left = len(warnings) - len(kept)
    return [*kept, CaptureWarning("", f"and {left} more files that could not be used, not listed")]
