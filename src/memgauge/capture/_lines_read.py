"""Read what the samplers of a run's Python processes wrote (``lines.<pid>.json``) into the parts
of a Profile: line statistics, peak attribution, leak suspects and import footprint."""

from __future__ import annotations

import linecache
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memgauge._files import read_json_object
from memgauge.analysis import leak_suspects
from memgauge.model import Attribution, ImportRecord, LeakSuspect, LineStats

Key = tuple[str, int, str]

# per process: the lines kept in the profile (by time, then by memory), and attribution entries
TOP_LINES = 500
TOP_ATTRIBUTION = 20
SOURCE_LINES = 100
STACK_DEPTH = 16


@dataclass
class LineData:
    lines: list[LineStats] = field(default_factory=list)
    attribution: list[Attribution] = field(default_factory=list)
    leaks: list[LeakSuspect] = field(default_factory=list)
    imports: list[ImportRecord] = field(default_factory=list)
    sampled_peaks: dict[int, int] = field(default_factory=dict)


def source_line(file: str, line: int) -> str:
    if line <= 0 or file.startswith("<"):
        return ""
    return linecache.getline(file, line).strip()


def read_lines(directory: str, t0: float, wall: float, pids: set[int] | None = None) -> LineData:
    """``pids``: the processes to keep (a pre-exec image's file is dropped); all when None."""
    out = LineData()
    names = sorted(n for n in os.listdir(directory) if n.startswith("lines.") and n.endswith(".json"))
    for name in names:
        data = read_json_object(os.path.join(directory, name))
        try:
            if data is None or (pids is not None and int(data["pid"]) not in pids):
                continue
            part = LineData()
            _process(data, t0, wall, part)
        except (KeyError, IndexError, ValueError, TypeError):
            # a file the sampler did not write whole (its process ran another memgauge, or an old
            # one): that process has no lines, the run keeps its profile
            continue
        out.lines.extend(part.lines)
        out.attribution.extend(part.attribution)
        out.leaks.extend(part.leaks)
        out.imports.extend(part.imports)
        out.sampled_peaks.update(part.sampled_peaks)
    out.lines.sort(key=lambda s: -(s.cpu_python_seconds + s.cpu_native_seconds + s.wait_seconds))
    out.attribution.sort(key=lambda a: -a.bytes)
    out.leaks.sort(key=lambda s: -s.rate_bytes_per_second)
    out.imports.sort(key=lambda r: (r.start_seconds, r.pid))
    for stats in out.lines[:SOURCE_LINES]:
        stats.source = source_line(stats.file, stats.line)
    return out


def _process(data: dict[str, Any], t0: float, wall: float, out: LineData) -> None:
    pid = int(data["pid"])
    keys: list[Key] = [(str(k[0]), int(k[1]), str(k[2])) for k in data["keys"]]
    stacks: dict[int, list[Key]] = {int(sid): [keys[i] for i in ks] for sid, ks in data["stacks"].items()}

    lines = [
        LineStats(
            pid=pid,
            file=keys[row[0]][0],
            line=keys[row[0]][1],
            function=keys[row[0]][2],
            cpu_python_seconds=round(row[1], 6),
            cpu_native_seconds=round(row[2], 6),
            wait_seconds=round(row[3], 6),
            resident_growth_bytes=int(row[4]),
            samples=int(row[5]),
        )
        for row in data["lines"]
    ]
    lines.sort(key=lambda s: -(s.cpu_python_seconds + s.cpu_native_seconds + s.wait_seconds))
    kept = lines[:TOP_LINES]
    big = [s for s in lines[TOP_LINES:] if abs(s.resident_growth_bytes) >= 1 << 20]
    out.lines.extend(kept + big)

    peak = data["peak"]
    out.sampled_peaks[pid] = int(peak["rss"])
    by_line: dict[Key, int] = {}
    callers_of: dict[Key, list[Key]] = {}
    for sid, size in peak["retained"]:
        stack = stacks.get(int(sid))
        if not stack:
            continue
        by_line[stack[-1]] = by_line.get(stack[-1], 0) + int(size)
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

    t_end = float(data["t_end"])
    series: dict[Key, Sequence[tuple[float, int]]] = {
        keys[i]: [(float(t), int(b)) for t, b in points] for i, points in data["series"]
    }
    pairs = {
        (stack[i], stack[j])
        for stack in stacks.values()
        for i in range(len(stack))
        for j in range(i + 1, len(stack))
        if stack[i] in series and stack[j] in series
    }
    for fit in leak_suspects(series, t_end, pairs):
        file, line, function = fit.key
        out.leaks.append(
            LeakSuspect(
                pid=pid,
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
    out.imports.extend(
        ImportRecord(
            pid=pid,
            package=str(r[0]),
            start_seconds=round(float(r[1]) - t0, 6),
            seconds=round(float(r[2]), 6),
            resident_bytes=int(r[3]),
            self_seconds=round(float(r[4]), 6),
            self_resident_bytes=int(r[5]),
        )
        for r in data["imports"]
    )
