"""What the line sampler (``_sampler``) charges to the lines a sample saw: their CPU time (Python or
native), contention and waiting; the change of resident memory, to the lines that ran; and the
kernel's high-water mark where a C call holding the GIL may have peaked unseen. Functions of the
sampler's state; only small modules, as ``_sampler`` (imported into every measured process)."""

from __future__ import annotations

import os

from memgauge.capture._bytecode import blocked_keys
from memgauge.capture._procfs import parse_high_water
from memgauge.capture._sample_keys import NATIVE_THREADS_KEY, OWN_KEY, UNKNOWN_KEY
from memgauge.capture._wire import CPU_NATIVE, CPU_PYTHON, GROWTH, LINE_STATS, SAMPLES, WAIT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    from memgauge.capture._frames import Position, StackReader
    from memgauge.capture._ledger import Ledger

    Key = tuple[str, int, str]
    # a Python thread in a sample: its keys, its CPU ns, whether native, where it is blocked
    # (code, instruction) when it ran and then blocked (its growth was made before the block), and
    # the ns it spent runnable without a CPU
    Seen = tuple[list[Key], float, bool, Position, float]

    class Sampler(Protocol):
        """What of ``_sampler.Sampler`` these functions read and write (no import of it: no
        circle)."""

        rss: int
        max_rss: int
        peak_t: float
        peak_retained: dict[int, int]
        last_grown: list[tuple[list[Key], float]]
        status: int
        ledger: Ledger
        lines: dict[Key, list[float]]
        program_key: Key
        frames: StackReader


CONTENTION = len(LINE_STATS)  # a line's time runnable without a CPU, after its LINE_STATS
STATS = CONTENTION + 1


def charge_cpu(sampler: Sampler, seen: list[Seen], unowned: float, wall_ns: float) -> None:
    """Each seen line's CPU (Python or native, with its share of ``unowned``), contention and
    waiting; ``unowned`` goes to ``<native>`` where no line ran native code."""
    native_cpu = sum(c for _, c, n, _, _ in seen if n)
    for keys, cpu, native, _, queued in seen:
        stats = sampler.lines.get(keys[0])
        if stats is None:
            stats = sampler.lines[keys[0]] = [0.0] * STATS
        if native:
            stats[CPU_NATIVE] += (cpu + (unowned * cpu / native_cpu if native_cpu else 0.0)) / 1e9
        else:
            stats[CPU_PYTHON] += cpu / 1e9
        # the time without a CPU: queued for one (contention), else waiting (I/O, sleep, locks)
        stats[WAIT] += max(0.0, wall_ns - cpu - queued) / 1e9
        stats[CONTENTION] += queued / 1e9
        stats[SAMPLES] += 1
    if unowned > 0 and not native_cpu:
        stats = sampler.lines.get(NATIVE_THREADS_KEY)
        if stats is None:
            stats = sampler.lines[NATIVE_THREADS_KEY] = [0.0] * STATS
        stats[CPU_NATIVE] += unowned / 1e9


def _high_water(s: Sampler) -> int:
    """The process's resident high-water mark (VmHWM) now, 0 where it cannot be read."""
    try:
        if s.status < 0:
            s.status = os.open("/proc/self/status", os.O_RDONLY | os.O_CLOEXEC)
        return parse_high_water(os.pread(s.status, 4096, 0))
    except OSError:
        return 0


def stalled_peak(s: Sampler, t: float, keys: list[Key]) -> None:
    """A thread kept the GIL through a long C operation: the process may have peaked and
    come down again before the sampler could look. The kernel's high-water mark says how
    high; the growth above the last sample is charged to the line that held the GIL."""
    unseen_peak(s, t, [(keys, 1.0)], s.rss)


def unseen_peak(s: Sampler, t: float, weights: list[tuple[list[Key], float]], last: int) -> None:
    """The process peaked between the last sample and this one (the kernel's high-water mark is
    above every size a sample saw): the growth above the last sample's size (``last``) is charged
    to the lines that ran meanwhile, in proportion to ``weights``, at the peak. A C call that lets
    the GIL go while it fills a buffer (numpy) is seen part way, then finishes, and its buffer is
    freed before the next sample: without this its last part would be no line's."""
    hwm = _high_water(s)
    total = sum(w for _, w in weights)
    if hwm > s.max_rss and hwm > last and total > 0:
        s.max_rss, s.peak_t, s.peak_retained = hwm, t, s.ledger.retained_with(weights, hwm - last)


def charge_memory(s: Sampler, t: float, rss: int, seen: list[Seen]) -> None:
    """The change of resident memory since the last sample, charged to the lines of the threads
    that ran, in proportion to their CPU time, and the peak's ledger kept."""
    delta = rss - s.rss
    s.rss = rss
    if delta == 0 or not rss:
        return
    weights = [(keys, cpu) for keys, cpu, _, _, _ in seen if cpu > 0] or [
        (keys, 1.0) for keys, _, _, _, _ in seen[:1]
    ]
    total = sum(w for _, w in weights)
    if delta > 0:
        if not weights:
            # before the program's first line: start-up; once the bootstrap has started the
            # program (``program_key``), the program's file (it ran to its end between samples)
            if not s.lines:
                sid = s.ledger.stack_id((s.program_key,))
            else:
                sid = s.ledger.stack_id((OWN_KEY if s.frames.own_running else UNKNOWN_KEY,))
            s.ledger.credit(sid, delta, t)
        grown = [(blocked_keys(k, b), c) for k, c, _, b, _ in seen if c > 0] or weights
        s.last_grown = grown
        for keys, w in grown:
            share = round(delta * w / total)
            s.lines.setdefault(keys[0], [0.0] * STATS)[GROWTH] += share
            s.ledger.credit(s.ledger.stack_id(tuple(reversed(keys))), share, t)
        if rss > s.max_rss:
            s.max_rss = rss
            s.peak_t = t
            s.peak_retained = dict(s.ledger.retained)
    else:
        # memory came down since the last sample: it may have peaked unseen in between, most
        # likely by the lines that grew last and are no longer running (a thread's C call that
        # finished, its buffer freed, the thread gone), else by those that ran since
        now = [k[0] for k, _ in weights]
        ended = [(k, w) for k, w in s.last_grown if k[0] not in now]
        unseen_peak(s, t, ended or weights, rss - delta)
        for keys, w in weights:
            s.lines[keys[0]][GROWTH] += round(delta * w / total)
        s.ledger.release(-delta, t)
