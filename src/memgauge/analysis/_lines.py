"""Line-level figures of a Profile: the busiest lines, the lines holding the peak, sensible paths."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from memgauge._units import format_bytes
from memgauge.model import LineStats, Profile

_MARKERS = ("site-packages", "dist-packages")
_PYTHON_DIR = re.compile(r"python\d+\.\d+t?")


def short_path(file: str, cwd: str | None = None) -> str:
    """A path people can read: relative to ``cwd`` when under it, from the package directory for
    installed libraries, ``~`` for the home directory; pseudo-files unchanged."""
    if file.startswith("<"):
        return file
    parts = file.split(os.sep)
    for marker in _MARKERS:
        if marker in parts:
            return "/".join(parts[len(parts) - parts[::-1].index(marker) :])
    base = cwd if cwd is not None else os.getcwd()
    if base and file.startswith(base.rstrip(os.sep) + os.sep):
        return os.path.relpath(file, base)
    i = _stdlib_index(parts)
    if i is not None:
        return "<stdlib>/" + "/".join(parts[i + 1 :])
    home = os.path.expanduser("~")
    if home not in ("", "/") and file.startswith(home + os.sep):
        return "~" + file[len(home) :]
    return file


@dataclass(frozen=True)
class LineRow:
    stats: LineStats
    total_seconds: float
    share: float  # of all sampled time of the run

    @property
    def python_share(self) -> float:
        return self.stats.cpu_python_seconds / self.total_seconds if self.total_seconds else 0.0

    @property
    def native_share(self) -> float:
        return self.stats.cpu_native_seconds / self.total_seconds if self.total_seconds else 0.0

    @property
    def wait_share(self) -> float:
        return self.stats.wait_seconds / self.total_seconds if self.total_seconds else 0.0

    @property
    def contention_share(self) -> float:
        """Runnable but queued for a CPU (a busy machine), not waiting for I/O."""
        return self.stats.contention_seconds / self.total_seconds if self.total_seconds else 0.0


def _stdlib_index(parts: list[str]) -> int | None:
    """Index of ``pythonX.Y`` in ``.../lib/pythonX.Y/...`` (an interpreter's standard library: any
    interpreter's, the program may run another than memgauge's), or None."""
    for i in range(len(parts) - 2, 0, -1):
        if parts[i - 1] in ("lib", "lib64") and _PYTHON_DIR.fullmatch(parts[i]):
            return i
    return None


def _is_library_path(file: str) -> bool:
    parts = file.split(os.sep)
    return file.startswith("<") or any(m in parts for m in _MARKERS) or _stdlib_index(parts) is not None


def _total(s: LineStats) -> float:
    return s.cpu_python_seconds + s.cpu_native_seconds + s.wait_seconds + s.contention_seconds


def contention_share(profile: Profile) -> float:
    """The share of all sampled time that threads spent runnable but queued for a CPU: a busy
    machine's, not the program's waiting (``/proc/PID/task/TID/schedstat`` run delay)."""
    everything = sum(_total(s) for s in profile.lines)
    return sum(s.contention_seconds for s in profile.lines) / everything if everything else 0.0


def top_lines(profile: Profile, n: int = 10, *, by: str = "time", user_only: bool = False) -> list[LineRow]:
    """The ``n`` lines with the most sampled time (``by="time"``), CPU time (``"cpu"``) or waiting
    (``"wait"``); ``user_only`` leaves out lines in libraries and pseudo-files (a pool's idle
    threads wait in library code)."""
    everything = sum(_total(s) for s in profile.lines) or 1.0

    def key(s: LineStats) -> float:
        if by == "cpu":
            return s.cpu_python_seconds + s.cpu_native_seconds
        return s.wait_seconds if by == "wait" else _total(s)

    candidates = [s for s in profile.lines if not user_only or not _is_library_path(s.file)]
    ranked = sorted(candidates, key=key, reverse=True)[:n]
    return [LineRow(s, _total(s), _total(s) / everything) for s in ranked if key(s) > 0]


def inherited_note(profile: Profile) -> str:
    """The words under "resident peak held by" where forked processes hold ``<inherited>`` pages:
    their parent's pages, shared with it until one of them writes a page, counted in each one's
    resident size but once in the group's peak, so the rows sum to more than it. "" without."""
    rows = [a for a in profile.peak.attribution if a.file == "<inherited>"]
    if not rows:
        return ""
    total = sum(a.bytes for a in profile.peak.attribution)
    held = sum(a.bytes for a in rows)
    who = "1 forked process holds" if len(rows) == 1 else f"{len(rows)} forked processes hold"
    peak = profile.peak.resident_bytes
    over = ""
    if total > peak:
        over = f"; the rows sum to {format_bytes(total)} against a peak of {format_bytes(peak)}"
    return (
        f"<inherited>: {who} {format_bytes(held)} of their parent's memory at fork, pages shared "
        f"with it until written, so counted in each process's resident size but once in the "
        f"group's{over}."
    )
