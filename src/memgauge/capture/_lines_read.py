"""Read what the samplers of a run's Python processes wrote (``lines.<pid>.json``, laid out as
``_wire`` says) into the parts of a Profile: line statistics, peak attribution and import footprint,
and, raw, each process's retained-memory series (finding leaks in them is analysis: the runner's
assembly does it).

A file that cannot be read whole (cut short, of a wire version this memgauge does not read, not
laid out as the format says) loses that process's lines, never the run's profile, and is named in
the profile's warnings.
"""

from __future__ import annotations

import json
import linecache
import os
from dataclasses import dataclass, field

from memgauge.capture._line_times import LINE_TIMES, line_spans
from memgauge.capture._wire import (
    CHILD_ROW,
    CONTENTION_ROW,
    IMPORT_ROW,
    KEY_ROW,
    LINE_ROW,
    LINES,
    LINES_FIELDS,
    LINES_OPTIONAL,
    PEAK_FIELDS,
    PEAK_OPTIONAL,
    POINT_ROW,
    RETAINED_ROW,
    SERIES_ROW,
    layout_problem,
    open_record,
    pid_of,
    problem,
)
from memgauge.model import Attribution, CaptureWarning, HeldLine, ImportRecord, LineStats

TYPE_CHECKING = False  # not typing's: a run imports no typing (docs/benchmarks.md)
if TYPE_CHECKING:
    from typing import Any

Key = tuple[str, int, str]

# per process: the lines kept in the profile (by time, then by memory), and attribution entries
TOP_LINES = 500
TOP_ATTRIBUTION = 20
SOURCE_LINES = 100
STACK_DEPTH = 16
# lines holding less at exit are left out of held_at_exit: interpreter start-up and small objects
HELD_MIN_BYTES = 1 << 20


@dataclass
class RetainedSeries:
    """One process's inclusive retained bytes per line over time (``(t, bytes)``, ``t`` on the
    monotonic clock), the sampled stacks (outermost frame first), when its sampling ended and
    began (``t_start`` None: a file that did not say)."""

    pid: int
    t_end: float
    series: dict[Key, list[tuple[float, int]]]
    stacks: list[list[Key]]
    t_start: float | None = None


@dataclass
class LineData:
    lines: list[LineStats] = field(default_factory=list)
    attribution: list[Attribution] = field(default_factory=list)
    imports: list[ImportRecord] = field(default_factory=list)
    sampled_peaks: dict[int, int] = field(default_factory=dict)
    # per process, in the order of the files
    retained: list[RetainedSeries] = field(default_factory=list)
    # child pid -> (the pid that started it, its line that did): to charge a child that left no lines
    started_by: dict[int, tuple[int, Key]] = field(default_factory=dict)
    # what each process still held at its last sample, by innermost line, largest first
    held: list[HeldLine] = field(default_factory=list)
    # when the main thread of each process was on which line: (pid, file, line, function, start,
    # end, seconds), seconds since t0 (``_line_times``), for GPU time per line
    line_times: list[tuple[int, str, int, str, float, float, float]] = field(default_factory=list)


def source_line(file: str, line: int) -> str:
    if line <= 0 or file.startswith("<"):
        return ""
    return linecache.getline(file, line).strip()


def read_lines(
    directory: str,
    t0: float,
    pids: set[int] | None = None,
    *,
    warnings: list[CaptureWarning] | None = None,
) -> LineData:
    """What the samplers under ``directory`` wrote, times as seconds since ``t0``. ``pids``: the
    processes to keep (a pre-exec image's file is left out); all when None. A file that cannot be
    used is appended to ``warnings`` (the profile's; None only where no profile is made)."""
    out = LineData()
    names = sorted(n for n in os.listdir(directory) if pid_of(n, LINES) is not None)
    for name in names:
        part = LineData()
        try:
            data = _load(os.path.join(directory, name))
            if pids is not None and data["pid"] not in pids:
                continue
            _process(data, t0, part)
        except _UnreadableError as e:
            if warnings is not None:
                warnings.append(CaptureWarning(name, f"{e}: the line samples of this process are missing"))
            continue
        out.lines.extend(part.lines)
        out.attribution.extend(part.attribution)
        out.imports.extend(part.imports)
        out.sampled_peaks.update(part.sampled_peaks)
        out.retained.extend(part.retained)
        out.started_by.update(part.started_by)
        out.held.extend(part.held)
        out.line_times.extend(part.line_times)
    out.held.sort(key=lambda h: -h.bytes)
    out.lines.sort(
        key=lambda s: -(s.cpu_python_seconds + s.cpu_native_seconds + s.wait_seconds + s.contention_seconds)
    )
    out.attribution.sort(key=lambda a: -a.bytes)
    out.imports.sort(key=lambda r: (r.start_seconds, r.pid))
    for stats in out.lines[:SOURCE_LINES]:
        stats.source = source_line(stats.file, stats.line)
    return out


class _UnreadableError(Exception):
    """Why a lines file cannot be used."""


def _load(path: str) -> dict[str, Any]:
    try:
        with open_record(path) as f:
            data = json.load(f)
    except OSError as e:
        raise _UnreadableError(f"unreadable ({e.strerror or e})") from e
    except ValueError as e:
        raise _UnreadableError(f"not JSON ({e})") from e
    why = problem(data, LINES_FIELDS, LINES_OPTIONAL)
    if why is None:
        inner = layout_problem(data["peak"], PEAK_FIELDS, PEAK_OPTIONAL)
        why = None if inner is None else f"in 'peak': {inner}"
    if why is not None:
        raise _UnreadableError(why)
    return dict(data)


def _rows(names: tuple[str, ...], rows: Any) -> list[dict[str, Any]]:
    """Positional rows as dicts by column name; a row of another length is a malformed file."""
    return [dict(zip(names, row, strict=True)) for row in rows]


def _process(data: dict[str, Any], t0: float, out: LineData) -> None:
    try:
        _decode(data, t0, out)
    except (KeyError, IndexError, ValueError, TypeError, AttributeError) as e:
        detail = f"no {e}" if isinstance(e, KeyError) else f"{type(e).__name__}: {e}"
        raise _UnreadableError(f"not laid out as the wire format says ({detail})") from e


def _decode(data: dict[str, Any], t0: float, out: LineData) -> None:
    pid = int(data["pid"])
    keys: list[Key] = [
        (str(k["file"]), int(k["line"]), str(k["function"])) for k in _rows(KEY_ROW, data["keys"])
    ]
    stacks: dict[int, list[Key]] = {int(sid): [keys[i] for i in ks] for sid, ks in data["stacks"].items()}

    queued = {int(r["key"]): float(r["seconds"]) for r in _rows(CONTENTION_ROW, data.get("contention", []))}
    lines = [
        LineStats(
            pid=pid,
            file=keys[row["key"]][0],
            line=keys[row["key"]][1],
            function=keys[row["key"]][2],
            cpu_python_seconds=round(row["cpu_python_seconds"], 6),
            cpu_native_seconds=round(row["cpu_native_seconds"], 6),
            wait_seconds=round(row["wait_seconds"], 6),
            contention_seconds=round(queued.get(int(row["key"]), 0.0), 6),
            resident_growth_bytes=int(row["resident_growth_bytes"]),
            samples=int(row["samples"]),
        )
        for row in _rows(LINE_ROW, data["lines"])
    ]
    lines.sort(
        key=lambda s: -(s.cpu_python_seconds + s.cpu_native_seconds + s.wait_seconds + s.contention_seconds)
    )
    kept = lines[:TOP_LINES]
    big = [s for s in lines[TOP_LINES:] if abs(s.resident_growth_bytes) >= 1 << 20]
    out.lines.extend(kept + big)

    peak = data["peak"]
    out.sampled_peaks[pid] = int(peak["rss"])
    by_line: dict[Key, int] = {}
    callers_of: dict[Key, list[Key]] = {}
    for entry in _rows(RETAINED_ROW, peak["retained"]):
        stack = stacks.get(int(entry["stack"]))
        if not stack:
            continue
        by_line[stack[-1]] = by_line.get(stack[-1], 0) + int(entry["bytes"])
        callers_of.setdefault(stack[-1], stack[:-1])
    ranked = sorted(by_line.items(), key=lambda kv: -kv[1])[:TOP_ATTRIBUTION]
    out.attribution.extend(
        Attribution(
            pid=pid,
            file=k[0],
            line=k[1],
            function=k[2],
            bytes=size,
            stack=[f"{c[0]}:{c[1]}" for c in callers_of[k][-STACK_DEPTH:]],
            source=source_line(k[0], k[1]),
        )
        for k, size in ranked
        if size > 0
    )

    series = {
        keys[s["key"]]: [(float(p["t"]), int(p["bytes"])) for p in _rows(POINT_ROW, s["points"])]
        for s in _rows(SERIES_ROW, data["series"])
    }
    start = data.get("t_start")
    out.retained.append(
        RetainedSeries(
            pid, float(data["t_end"]), series, list(stacks.values()), None if start is None else float(start)
        )
    )
    held: dict[Key, int] = {}
    for entry in _rows(RETAINED_ROW, data.get("retained", [])):
        stack = stacks.get(int(entry["stack"]))
        if stack:
            held[stack[-1]] = held.get(stack[-1], 0) + int(entry["bytes"])
    out.held.extend(
        HeldLine(pid=pid, file=k[0], line=k[1], function=k[2], bytes=size, source=source_line(k[0], k[1]))
        for k, size in sorted(held.items(), key=lambda kv: -kv[1])[:TOP_ATTRIBUTION]
        if size >= HELD_MIN_BYTES
    )
    out.line_times.extend(line_spans(data.get(LINE_TIMES), keys, pid, t0))
    for child in _rows(CHILD_ROW, data.get("children", [])):
        out.started_by[int(child["pid"])] = (pid, keys[child["key"]])
    out.imports.extend(
        ImportRecord(
            pid=pid,
            package=str(r["package"]),
            start_seconds=round(float(r["start"]) - t0, 6),
            seconds=round(float(r["seconds"]), 6),
            resident_bytes=int(r["resident_bytes"]),
            self_seconds=round(float(r["self_seconds"]), 6),
            self_resident_bytes=int(r["self_resident_bytes"]),
        )
        for r in _rows(IMPORT_ROW, data["imports"])
    )
