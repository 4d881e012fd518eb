"""Advice a profile supports with its own numbers, and only where it does.

Each rule states the figures it fired on (``Advice.evidence``), so a reader can check it against
the tables next to it. Thresholds are deliberately high: a report that always advises is ignored.

- ``file-io``: a line reading a whole file (CSV, JSON, text or pickle) holds at least 10% (and
  16 MiB) of its process's peak.
- ``imports``: imports grew a process by at least half its peak (and 32 MiB), or took at least 30%
  of the wall time (and 0.5 s).
- ``temporaries``: a line holding at least 20% (and 32 MiB) of its process's peak kept less than
  half of that once it had run (it built temporaries and released them itself), or the process
  released at least half of it after its peak and stayed that much lower (the median of its later
  samples, the last one left out: it may be the interpreter's teardown). Never an import line:
  what an import holds is the library's footprint (the ``imports`` rule), not temporaries.
- ``waiting``: a user line waited at least 25% of the wall time while the run used less than half
  a core on average.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, replace

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis._leaks import is_import_line
from memgauge.analysis._lines import short_path, top_lines
from memgauge.model import Attribution, LineStats, Profile

MIB = 1 << 20

# a read of a whole file into memory, by the format it parses
_TEXT_READ = re.compile(
    r"\b(read_csv|read_table|read_json|read_fwf|loadtxt|genfromtxt|csv\.(reader|DictReader)|json\.loads?)\s*\("
)
_PICKLE_READ = re.compile(r"\b(pickle\.loads?|read_pickle|joblib\.load|torch\.load|dill\.loads?)\s*\(")


# an import statement: what it holds is a library's footprint, never temporaries to work around
@dataclass(frozen=True)
class Evidence:
    label: str
    value: str


@dataclass(frozen=True)
class Advice:
    kind: str
    title: str
    detail: str
    evidence: tuple[Evidence, ...]
    where: str | None = None


def advise(profile: Profile, cwd: str | None = None) -> list[Advice]:
    """Every rule that fires, most memory at stake first."""
    found: list[tuple[float, Advice]] = []
    found += _file_io(profile, cwd)
    found += _imports(profile)
    found += _temporaries(profile, cwd)
    found += _waiting(profile, cwd)
    return [a for _, a in sorted(found, key=lambda x: -x[0])]


def _process_peaks(profile: Profile) -> dict[int, int]:
    peaks = {p.pid: p.peak_resident_bytes for p in profile.processes}
    return peaks or {0: profile.peak.resident_bytes}


def _peak_of(profile: Profile, pid: int) -> int:
    return _process_peaks(profile).get(pid) or profile.peak.resident_bytes


def _held_by_line(profile: Profile) -> list[Attribution]:
    """``peak.attribution`` with one entry per line of a process, largest first. A line that runs a
    comprehension or a generator expression runs two code objects (``<listcomp>`` before Python
    3.12, ``<genexpr>``), and the sampler charges each under its own function: advice is about
    the line, and a line's resident growth (``profile.lines``) is summed over its functions too."""
    merged: dict[tuple[int, str, int], Attribution] = {}
    for a in profile.peak.attribution:
        key = (a.pid, a.file, a.line)
        seen = merged.get(key)
        merged[key] = a if seen is None else replace(seen, bytes=seen.bytes + a.bytes)
    return sorted(merged.values(), key=lambda a: -a.bytes)


def _where(a: Attribution | LineStats, cwd: str | None) -> str:
    return f"{short_path(a.file, cwd)}:{a.line}"


def _share(part: float, whole: float) -> str:
    return f"{part / whole:.0%}" if whole > 0 else "n/a"


def _file_io(profile: Profile, cwd: str | None) -> list[tuple[float, Advice]]:
    out: list[tuple[float, Advice]] = []
    for a in _held_by_line(profile):
        text = _TEXT_READ.search(a.source)
        pickled = None if text else _PICKLE_READ.search(a.source)
        if text is None and pickled is None:
            continue
        peak = _peak_of(profile, a.pid)
        if a.bytes < 16 * MIB or a.bytes < 0.1 * peak:
            continue
        call = (text or pickled).group(1)  # type: ignore[union-attr]
        if text is not None:
            title = f"A file parsed by {call}() makes {_share(a.bytes, peak)} of the peak"
            detail = (
                "Text formats are parsed into Python objects or wide default types, and the whole file "
                "is read even when a few columns are used. A columnar format (Parquet or Arrow "
                "Feather via pyarrow) loads typed columns directly, and only the columns asked for "
                "(columns=[...]); or read in chunks (chunksize=) and reduce each chunk."
            )
        else:
            title = f"An unpickled object ({call}()) makes {_share(a.bytes, peak)} of the peak"
            detail = (
                "Unpickling builds every object in memory at once, and pickle.load briefly needs the "
                "serialised bytes too. Arrays and tables stored in Arrow/Parquet, .npy with "
                "np.load(mmap_mode='r') or safetensors can be memory-mapped and read lazily."
            )
        evidence = [
            Evidence("held at the peak", format_bytes(a.bytes)),
            Evidence("process peak", format_bytes(peak)),
            Evidence("share", _share(a.bytes, peak)),
        ]
        out.append((a.bytes, Advice("file-io", title, detail, tuple(evidence), _where(a, cwd))))
    return out


def _imports(profile: Profile) -> list[tuple[float, Advice]]:
    by_pid: dict[int, list[tuple[str, int, float]]] = defaultdict(list)
    for r in profile.imports:
        by_pid[r.pid].append((r.package, r.self_resident_bytes, r.self_seconds))
    out: list[tuple[float, Advice]] = []
    wall = profile.wall_seconds
    for pid, records in by_pid.items():
        grown = sum(b for _, b, _ in records)
        seconds = sum(s for _, _, s in records)
        peak = _peak_of(profile, pid)
        heavy_memory = grown >= 32 * MIB and grown >= 0.5 * peak
        slow = seconds >= 0.5 and wall > 0 and seconds >= 0.3 * wall
        if not (heavy_memory or slow):
            continue
        top = sorted(records, key=lambda r: -r[1] if heavy_memory else -r[2])[:3]
        what = ", ".join(
            f"{name} {format_bytes(b) if heavy_memory else format_seconds(s)}" for name, b, s in top
        )
        title = (
            f"Imports make {_share(grown, peak)} of process {pid}'s peak"
            if heavy_memory
            else f"Imports take {_share(seconds, wall)} of the wall time"
        )
        detail = (
            "The footprint is dominated by loading libraries, not by the work. Import heavy packages "
            "only in the code paths that use them, use a lighter dependency for the small part that "
            "is needed, or, in a server, import once in a parent that forks its workers so they share "
            "the pages."
        )
        evidence = (
            Evidence("imports grew the process by", format_bytes(grown)),
            Evidence("process peak", format_bytes(peak)),
            Evidence("import time", f"{format_seconds(seconds)} of {format_seconds(wall)} wall"),
            Evidence("largest", what),
        )
        out.append((grown, Advice("imports", title, detail, evidence)))
    return out


def _after_peak(profile: Profile, pid: int) -> tuple[int, int] | None:
    """(highest sample, median of the samples after it) of process ``pid``'s resident series, or
    None with fewer than 3 samples after the highest. The last sample is left out: it may fall
    in the interpreter's teardown, which frees what the program held to the end."""
    values = next((s.resident_bytes for s in profile.timeline.processes if s.pid == pid), None)
    if not values:
        return None
    top = max(range(len(values)), key=values.__getitem__)
    after = sorted(values[top + 1 : -1])
    if len(after) < 3:
        return None
    return values[top], after[len(after) // 2]


def _temporaries(profile: Profile, cwd: str | None) -> list[tuple[float, Advice]]:
    """One advice for the lines whose bytes at the peak did not last, the largest first (the
    same words once, not once a line); never a line whose bytes are still held at exit, which
    the report lists under "still held at exit"."""
    growth: dict[tuple[int, str, int], int] = defaultdict(int)
    for s in profile.lines:
        growth[(s.pid, s.file, s.line)] += s.resident_growth_bytes
    at_exit = {(h.pid, h.file, h.line): h.bytes for h in profile.held_at_exit}
    found: list[tuple[int, Attribution, list[Evidence]]] = []
    for a in _held_by_line(profile):
        peak = _peak_of(profile, a.pid)
        if not a.line or a.bytes < 32 * MIB or a.bytes < 0.2 * peak or is_import_line(a.source):
            continue
        key = (a.pid, a.file, a.line)
        if at_exit.get(key, 0) >= 0.5 * a.bytes:
            continue  # held to the end (a program that failed with it alive): not a temporary
        kept = max(0, growth[key]) if key in growth else None
        settled = _after_peak(profile, a.pid)
        evidence = [Evidence("held at the peak", format_bytes(a.bytes))]
        if kept is not None and kept < 0.5 * a.bytes:
            # the line released it itself, while it ran
            released = a.bytes - kept
            evidence.append(Evidence("kept after the line ran", format_bytes(kept)))
        elif settled is not None and settled[0] - settled[1] >= 0.5 * a.bytes:
            # released soon after, for good: the process stayed that much lower for most of the
            # rest of its life (the median of its later samples)
            released = min(a.bytes, settled[0] - settled[1])
            evidence += [
                Evidence("process resident at its highest sample", format_bytes(settled[0])),
                Evidence("after it (median of the later samples)", format_bytes(settled[1])),
            ]
        else:
            continue
        evidence.append(Evidence("process peak", format_bytes(peak)))
        found.append((released, a, evidence))
    if not found:
        return []
    found.sort(key=lambda f: -f[0])
    released, a, evidence = found[0]
    if len(found) > 1:
        others = ", ".join(f"{_where(b, cwd)} {format_bytes(r)}" for r, b, _ in found[1:])
        evidence.append(Evidence("other lines of temporaries at the peak", others))
    title = f"{format_bytes(released)} of temporaries at the peak line, released soon after"
    detail = (
        "What this line held at the peak did not last: intermediate arrays or copies. Work in "
        "chunks, reuse buffers (in-place operations, out= arguments), or free inputs before "
        f"building outputs; the peak would drop by up to {format_bytes(released)}."
    )
    return [(released, Advice("temporaries", title, detail, tuple(evidence), _where(a, cwd)))]


def _waiting(profile: Profile, cwd: str | None) -> list[tuple[float, Advice]]:
    wall = profile.wall_seconds
    if wall <= 0:
        return []
    cpu = profile.cpu.user_seconds + profile.cpu.system_seconds
    rows = top_lines(profile, 1, by="wait", user_only=True)
    if not rows or cpu >= 0.5 * wall:
        return []
    s = rows[0].stats
    if s.wait_seconds < 0.25 * wall:
        return []
    title = f"CPU idle: the program waited {_share(s.wait_seconds, wall)} of its wall time on one line"
    detail = (
        "Time spent waiting (I/O, sleep, locks, another process) is not spent computing. Overlap it "
        "with work (a thread or asyncio for I/O, a DataLoader with workers and prefetching), batch "
        "the requests, or cache what is fetched repeatedly."
    )
    evidence = (
        Evidence("waiting on this line", format_seconds(s.wait_seconds)),
        Evidence("wall time", format_seconds(wall)),
        Evidence("CPU used", f"{format_seconds(cpu)} ({cpu / wall:.0%} of one core)"),
    )
    # no memory at stake: after the memory advice
    return [(-1.0, Advice("waiting", title, detail, evidence, _where(s, cwd)))]
