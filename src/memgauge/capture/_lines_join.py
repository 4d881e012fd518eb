"""The lines record of a process sampled from outside (``watcher``'s ``_outside``: py-spy), in the
wire format the in-process sampler writes (``lines.<pid>.json``), so that one reader
(``_lines_read``) serves both.

Two series are joined in time: the stacks of the process's Python threads, read from outside while
C code runs (no GIL needed), as spans ``(start, end, frames)`` per native thread id; and the polls
the runner took of the process meanwhile, ``(t, resident bytes, {tid: (run ns, run delay ns)})``
(``/proc/PID/statm`` and each thread's ``schedstat``). Between two polls:

* each Python thread's CPU time goes to the lines it was on (split by the time on each), its run
  delay is *contention*, the rest of the interval *waiting*; CPU of threads without Python frames
  (BLAS, OpenMP pools) is *native* time of the lines on a CPU meanwhile, else of ``<native>``. The
  outside reader does not see who holds the GIL: a Python thread's own CPU time is counted as
  Python, even inside a C call;
* the change of resident memory goes to the lines of the threads that ran, in proportion to their
  CPU time (the main thread's line when none ran), through the same ledger (``_ledger``) the
  in-process sampler keeps: what is still resident, at the peak and at the end, by line.

What only the process itself knows (the imports it made, the line that started each child) comes
from the passive sampler's own record (``_sampling.PassiveSampler``) and is kept.
"""

from __future__ import annotations

import bisect
import itertools
import json
import os

from memgauge.capture._bytecode import blocked_line_of_source
from memgauge.capture._ledger import Ledger
from memgauge.capture._line_times import LineTimes
from memgauge.capture._lines_spans import (
    IDLE,
    Key,
    Poll,
    Span,
    bootstrap_spans,
    first_span_back,
    snap_spans,
    user_keys,
)
from memgauge.capture._lines_write import add_children, lines_record, write_lines
from memgauge.capture._sample_keys import INHERITED_KEY, NATIVE_THREADS_KEY, STARTUP_KEY, UNKNOWN_KEY
from memgauge.capture._wire import CPU_NATIVE, CPU_PYTHON, GROWTH, LINE_STATS, LINES, SAMPLES, WAIT, file_name

TYPE_CHECKING = False  # not typing's: a run imports no typing (docs/benchmarks.md)
if TYPE_CHECKING:
    from typing import Any

# (keys, CPU ns, queued ns, wall ns, whether keys[0] is the innermost frame: no library frame
# folded into it) of one thread's line between two polls
Piece = tuple[list[Key], float, float, float, bool]

CONTENTION = len(LINE_STATS)
STATS = CONTENTION + 1


class _Joined:
    """What ``lines_record`` reads of a sampler, filled from the two series."""

    def __init__(self, pid: int, lib: bool, interval: float, base: Key, first: Poll) -> None:
        self.pid, self.lib, self.interval, self.base = pid, lib, interval, base
        self.lines: dict[Key, list[float]] = {}
        self.ledger = Ledger()
        self.t_start = self.last_t = first[0]
        self.rss = first[1]
        self.ledger.credit(self.ledger.stack_id((base,)), self.rss, self.t_start)
        self.max_rss, self.peak_t = self.rss, self.t_start
        self.peak_retained = dict(self.ledger.retained)
        self.imports: list[list[Any]] = []
        self.times = LineTimes()  # the main thread's line over time, for GPU time per line
        self.started = False  # a stack was read: no longer the interpreter's start-up
        self.program: tuple[Key, float] | None = None  # the program's key and start (the bootstrap's)
        self.busy: dict[Key, float] = {}  # each line's CPU / wall over the run (``memory``)
        self._blocked: dict[Key, int] = {}  # a waiting line -> the line its growth goes to
        self.peaks: dict[float, int] = {}  # VmHWM at a poll where the size came down
        self.last_grown: list[tuple[list[Key], float]] = []  # the lines of the last growth

    def stats(self, key: Key) -> list[float]:
        row = self.lines.get(key)
        if row is None:
            row = self.lines[key] = [0.0] * STATS
        return row

    def interval_of(self, a: Poll, b: Poll, pieces: list[Piece]) -> None:
        """``pieces``: each thread's lines between the polls (``Piece``)."""
        # threads new since ``a`` count from zero: they started within the interval
        spent = sum(now[0] - a[2].get(tid, (0, 0, False))[0] for tid, now in b[2].items())
        python = sum(p[1] for p in pieces)
        self.started = self.started or bool(pieces)
        unowned = max(0.0, spent - python)
        for keys, cpu, queued, wall, _ in pieces:
            row = self.stats(keys[0])
            row[CPU_PYTHON] += cpu / 1e9
            if unowned and python:
                row[CPU_NATIVE] += unowned * cpu / python / 1e9
            # unclamped here: an interval read late counts too much CPU, the next too little; the
            # line's total is clamped at the end
            row[WAIT] += (wall - cpu - queued) / 1e9
            row[CONTENTION] += queued / 1e9
            row[SAMPLES] += wall / max(1.0, (b[0] - a[0]) * 1e9)
        if unowned and not python:
            if not self.started:
                self.stats(self.base)[CPU_PYTHON] += unowned / 1e9  # start-up, before the first stack
            else:
                self.stats(NATIVE_THREADS_KEY)[CPU_NATIVE] += unowned / 1e9
        self.memory(b, pieces)

    def memory(self, b: Poll, pieces: list[Piece]) -> None:
        t, rss = b[0], b[1]
        delta = rss - self.rss
        self.rss, self.last_t = rss, t
        if delta == 0 or not rss:
            return
        weights = self.weights(t, pieces)
        total = sum(w for _, w in weights)
        if delta < 0:
            self.unseen_peak(t, weights, rss - delta)
            self.ledger.release(-delta, t)
            for keys, w in weights:
                self.stats(keys[0])[GROWTH] += round(delta * w / total) if total else 0
            return
        if not weights or not total:
            self.ledger.credit(self.ledger.stack_id((UNKNOWN_KEY,)), delta, t)
        if all(self.busy.get(p[0][0], 0.0) < IDLE for p in pieces):
            # only waiting lines seen (a sleep), though a thread ran: what it ran was too short for
            # a sample, before it blocked (a request loop's 1 MiB append, then its sleep), so the
            # growth is the line before the block that builds something, as inside the process;
            # not where the block is in a library's frame folded into the line (an import)
            ran = {k[0] for k, c, _, _, direct in pieces if c > 0 and direct}
            weights = [(self.blocked(k) if k[0] in ran else k, w) for k, w in weights]
        self.last_grown = weights
        for keys, w in weights:
            share = round(delta * w / total) if total else 0
            self.stats(keys[0])[GROWTH] += share
            self.ledger.credit(self.ledger.stack_id(tuple(reversed(keys))), share, t)
        if rss > self.max_rss:
            self.max_rss, self.peak_t = rss, t
            self.peak_retained = dict(self.ledger.retained)

    def unseen_peak(self, t: float, weights: list[tuple[list[Key], float]], last: int) -> None:
        """The process peaked between the poll before ``t`` and the one at ``t`` (its high-water
        mark then is above every size a poll saw): the growth above the last poll's size (``last``)
        goes, at the peak, to the lines that grew last and no longer run (a C call whose buffer was
        freed right after it), else to those that ran meanwhile, as inside the process
        (``_sampler_charge.unseen_peak``). Without it the top of a spike built and freed within one
        poll interval (up to ~60 MiB at numpy's pace) was no line's."""
        hwm = self.peaks.get(t, 0)
        now = {k[0] for k, _ in weights}
        ended = [(k, w) for k, w in self.last_grown if k[0] not in now] or weights
        total = sum(w for _, w in ended)
        if hwm <= max(self.max_rss, last) or total <= 0:
            return
        self.max_rss, self.peak_t, self.peak_retained = hwm, t, self.ledger.retained_with(ended, hwm - last)

    def weights(self, t: float, pieces: list[Piece]) -> list[tuple[list[Key], float]]:
        """Each line's share of an interval's change. A line that spends its time waiting (a sleep,
        a lock) hardly makes memory: where a C call ends and a sleep begins within one poll, its
        growth is the C call's. So a line's share is its CPU there plus its time there at its busy
        ratio over the whole run."""
        weights = [(k, c + w * self.busy.get(k[0], 0.0)) for k, c, _, w, _ in pieces]
        weights = [(k, x) for k, x in weights if x > 0] or [(p[0], p[3]) for p in pieces[:1]]
        if not weights:
            # no Python line seen: the program once the bootstrap started it (a script over before
            # py-spy's next sample), else the interpreter's start-up before the first stack read
            if self.program is not None and t >= self.program[1]:
                weights = [([self.program[0]], 1.0)]
            elif not self.started:
                weights = [([self.base], 1.0)]
        return weights

    def charge_times(self, main_spans: list[Span]) -> None:
        """The main thread's line over time (``_line_times``), for GPU time per line."""
        for start, end, frames in main_spans:
            keys = user_keys(frames, self.lib)[0]
            if keys:
                self.times.charge(start, end, keys[0])

    def blocked(self, keys: list[Key]) -> list[Key]:
        """``keys`` with the line before the block that builds something (``blocked_line``)."""
        file, line, function = keys[0]
        found = self._blocked.get(keys[0], line)
        if keys[0] not in self._blocked:
            found = self._blocked[keys[0]] = blocked_line_of_source(file, function, line) or line
        return keys if found == line else [(file, found, function), *keys[1:]]


def _busy(intervals: list[tuple[Poll, Poll, list[Piece]]]) -> dict[Key, float]:
    """Each line's CPU time, and time queued for a CPU, over its wall time, over the run: a line
    that wanted a CPU and waited for one (another thread, another process had it) runs, it does
    not wait (a C call queued two thirds of its time beside memray's writer read as a sleep, and
    its growth went elsewhere)."""
    cpu: dict[Key, float] = {}
    wall: dict[Key, float] = {}
    for _, _, pieces in intervals:
        for stack, c, q, w, _ in pieces:
            cpu[stack[0]] = cpu.get(stack[0], 0.0) + c + q
            wall[stack[0]] = wall.get(stack[0], 0.0) + w
    return {k: min(1.0, cpu[k] / w) for k, w in wall.items() if w > 0}


def _package(frames: list[Key]) -> str:
    """The installed package a library-only stack runs in: its innermost file's path up to the
    directory under ``site-packages`` (``.../site-packages/pandas/``); empty when none."""
    for marker in ("/site-packages/", "/dist-packages/"):
        for key in frames:
            i = key[0].find(marker)
            if i >= 0:
                j = key[0].find("/", i + len(marker))
                return key[0][: j + 1] if j > 0 else ""
    return ""


def _cpu_of(
    overlaps: list[tuple[float, list[Key]]], cpu: float, running0: bool, running1: bool
) -> list[float]:
    """A thread's CPU time between two polls, split among the lines it was on (in time order,
    seconds on each): a thread that ran at the first poll and sleeps at the second ran first, so the
    CPU goes to its first lines (a C call that ended in the interval, not the sleep after it);
    one that woke up, to its last; else in proportion to the time on each."""
    if len(overlaps) < 2 or running0 == running1:
        covered = sum(d for d, _ in overlaps) or 1.0
        return [cpu * d / covered for d, _ in overlaps]
    order = range(len(overlaps)) if running0 else range(len(overlaps) - 1, -1, -1)
    out = [0.0] * len(overlaps)
    left = cpu
    for i in order:
        take = min(left, overlaps[i][0] * 1e9)
        out[i] = take
        left -= take
    if left > 0:
        out[order[-1]] += left
    return out


def _starts(spans: dict[int, list[Span]]) -> dict[int, list[float]]:
    """Each thread's span starts, for ``_within``'s bisection."""
    return {tid: [s for s, _, _ in spans_of] for tid, spans_of in spans.items()}


def _within(spans: list[Span], starts: list[float], ta: float, tb: float) -> list[tuple[float, list[Key]]]:
    """How long each of a thread's spans lasted between ``ta`` and ``tb``, with its frames. The
    spans follow one another (one thread's stack over time): those in the interval are found by
    bisection, not by a scan of the run's every span per interval (quadratic in the run's length)."""
    lo = max(0, bisect.bisect_right(starts, ta) - 1)
    hi = bisect.bisect_left(starts, tb, lo)
    overlaps = [(min(e, tb) - max(s, ta), f) for s, e, f in spans[lo:hi]]
    return [(d, f) for d, f in overlaps if d > 0]


def _pieces(
    a: Poll, b: Poll, spans: dict[int, list[Span]], starts: dict[int, list[float]], lib: bool, main: int
) -> list[Piece]:
    """Each Python thread's lines between polls ``a`` and ``b``, main thread first. A busy thread
    with no user frame (a library's pool worker: pandas reading a CSV) is charged to the user line
    waiting for it: that of a thread inside the same package, else the main thread's."""
    ta, tb = a[0], b[0]
    wall_ns = (tb - ta) * 1e9
    # per thread: (keys, has a user frame, frames, CPU ns, queued ns, wall ns) of each of its lines
    seen: list[tuple[list[Key], bool, list[Key], float, float, float]] = []
    main_keys: list[Key] | None = None
    for tid, thread_spans in spans.items():
        if tid not in b[2]:
            continue
        run0, delay0, running0 = a[2].get(tid, b[2][tid])
        run1, delay1, running1 = b[2][tid]
        # not clipped to the interval: a poll read late (the poller waited for a CPU) counts its
        # excess in this interval and its shortfall in the next, and the run's totals stay exact
        cpu = float(max(run1 - run0, 0))
        queued = float(max(delay1 - delay0, 0))
        overlaps = _within(thread_spans, starts[tid], ta, tb)
        covered = sum(d for d, _ in overlaps)
        for (d, frames), on_cpu in zip(overlaps, _cpu_of(overlaps, cpu, running0, running1), strict=True):
            keys, user = user_keys(frames, lib)
            if keys:
                share = d / covered
                seen.append((keys, user, frames, on_cpu, queued * share, wall_ns * share))
                if tid == main and user:
                    main_keys = keys
    out: list[Piece] = []
    for keys, user, frames, cpu, queued, wall in seen:
        charged = keys
        if not user and not lib and cpu > 0:
            package = _package(frames)
            inside = [
                k for k, u, f, _, _, _ in seen if u and package and any(x[0].startswith(package) for x in f)
            ]
            charged = inside[0] if inside else main_keys or keys
        out.append((charged, cpu, queued, wall, charged[0] == frames[0]))
    return out


def _passive_record(directory: str, pid: int) -> dict[str, Any]:
    """What the process's passive sampler wrote (its imports, children, last word), or {}."""
    try:
        with open(os.path.join(directory, file_name(LINES, pid))) as f:
            return dict(json.load(f))
    except (OSError, ValueError, TypeError):
        return {}


def _program(passive: dict[str, Any]) -> tuple[Key, float] | None:
    """The program's key and start, as the process's bootstrap wrote them."""
    program = passive.get("program")
    if isinstance(program, list) and len(program) == 4:
        return (str(program[0]), int(program[1]), str(program[2])), float(program[3])
    return None


def join_outside_lines(
    directory: str,
    pid: int,
    polls: list[Poll],
    spans: dict[int, list[Span]],
    *,
    lib: bool,
    interval: float,
    announced: bool = True,
    child: bool = False,
    peaks: dict[float, int] | None = None,
) -> bool:
    """Write ``lines.<pid>.json`` from the outside samples of ``pid`` and its passive record (whose
    imports and children are kept). False when there is nothing to join (fewer than two polls),
    and for a ``child`` process of which py-spy never saw a line of the program (found late, it
    was read only in its start-up, or killed first): its peak is then charged to the line that
    started it (``runner``'s ``charge_unsampled``), not to its start-up. ``peaks``: the process's
    high-water mark at the polls where its size came down, by the poll's time."""
    if child and not any(user_keys(f, lib=False)[1] for spans_of in spans.values() for _, _, f in spans_of):
        return False
    if len(polls) < 2:
        return False
    passive = _passive_record(directory, pid)
    if not passive and not announced:
        return False  # no memgauge inside it: a fork on its way to exec (a preexec_fn), not sampled
    if passive.get("lines"):
        return False  # the process sampled itself (it was not attached in time): its own record stands
    base = INHERITED_KEY if list(INHERITED_KEY) in passive.get("keys", []) else STARTUP_KEY
    # spans sorted per thread; the main thread (tid == pid) first: it gets the growth when none ran.
    # A stack is first seen at the first sample after it began, half a sampling period late on
    # average: its span is moved that much earlier
    shift = interval / 2
    ordered = {
        tid: sorted((s - shift, e - shift, f) for s, e, f in spans_of)
        for tid, spans_of in sorted(spans.items(), key=lambda kv: kv[0] != pid)
    }
    # the process's own last word (its passive sampler's final write, at exit): what follows is the
    # interpreter's shutdown freeing everything, which no line of the program did
    end = passive.get("t_end")
    if isinstance(end, (int, float)) and passive.get("pid") == pid:
        polls = [p for p in polls if p[0] <= end] or polls[:2]
    if len(polls) < 2:
        return False
    joined = _Joined(pid, lib, interval, base, polls[0])
    joined.imports = list(passive.get("imports", []))
    joined.peaks = peaks or {}
    joined.program = _program(passive)
    if joined.program is not None and pid in ordered:
        ordered[pid] = bootstrap_spans(ordered[pid], joined.program[1])
    starts = _starts(ordered)
    intervals = [(a, b, _pieces(a, b, ordered, starts, lib, pid)) for a, b in itertools.pairwise(polls)]
    busy = _busy(intervals)
    began = joined.program[1] if joined.program is not None else float("-inf")
    ordered = {
        tid: first_span_back(snap_spans(spans_of, polls, tid, busy, lib), polls, tid, began)
        for tid, spans_of in ordered.items()
    }
    starts = _starts(ordered)
    intervals = [(a, b, _pieces(a, b, ordered, starts, lib, pid)) for a, b in itertools.pairwise(polls)]
    joined.busy = _busy(intervals)
    joined.charge_times(ordered.get(pid, []))
    for a, b, pieces in intervals:
        joined.interval_of(a, b, pieces)
    for row in joined.lines.values():
        row[SAMPLES] = round(row[SAMPLES])
        row[WAIT] = max(0.0, row[WAIT])
    record = lines_record(joined)
    add_children(record, passive)
    record["sampler"] = "outside"
    write_lines(directory, pid, record)
    return True
