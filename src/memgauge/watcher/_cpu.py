"""CPU utilisation over time: per core of the machine and per process of the tree.

The tree watcher calls ``CpuSampler.sample`` at the end of each of its samples with the CPU seconds
(user + system) it has just read from each process's ``/proc/PID/stat``; the sampler keeps an
interval only every ``interval`` seconds (200 ms by default), and then reads ``/proc/stat`` once
for the per-core times (one small read, ~20 us). A process's figure for an interval is the CPU
seconds it used in it per second (1.0: one core busy); a core's is the share of its time that was
not idle (every program on the machine counted: ``/proc/stat`` is machine-wide). When
``capacity`` intervals are held, adjacent pairs are merged (by their mean) and the interval
doubles, so a long run keeps between ``capacity/2`` and ``capacity`` intervals.

At the same intervals, where the watcher gives it a reader, each process's I/O counters
(``/proc/PID/io``, readable for the processes of memgauge's own user): the bytes read and written
through calls (``rchar``, ``wchar``) per second of each interval, and the last counters read.
"""

from __future__ import annotations

from memgauge.capture import parse_io

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from memgauge.model import CpuProcessSeries, CpuUsage

# plain classes, and the Profile types only in build(): the runner imports the watcher before it
# starts the program

# a run with more processes than this keeps the series of the busiest only
MAX_PROCESSES = 32


def read_core_times(path: str = "/proc/stat") -> list[tuple[int, int]]:
    """(busy, total) clock ticks of each CPU (``cpu0``, ``cpu1``...), in order; [] when unreadable.
    Busy is everything but ``idle`` and ``iowait``; ``guest`` is already inside ``user``."""
    out: list[tuple[int, int]] = []
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError:
        return out
    for line in text.split(b"\n"):
        if not line.startswith(b"cpu") or line[3:4] in (b" ", b""):
            continue
        fields = line.split()[1:9]
        try:
            ticks = [int(v) for v in fields]
        except ValueError:
            return []
        total = sum(ticks)
        idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
        out.append((total - idle, total))
    return out


def _merge(start: int, values: list[float]) -> tuple[int, list[float]]:
    """A series living at global indices ``start``.. merged into pairs (2j, 2j+1) by their mean."""
    out: list[float] = []
    first = True
    for i, v in enumerate(values):
        if (start + i) % 2 == 0 or first:
            out.append(v)
            first = False
        else:
            out[-1] = round((out[-1] + v) / 2, 4)
    return start // 2, out


class CpuSampler:
    def __init__(self, interval: float = 0.2, capacity: int = 300, stat_path: str = "/proc/stat") -> None:
        if capacity < 4 or capacity % 2:
            raise ValueError("capacity must be an even number >= 4")
        self.interval = interval
        self._capacity = capacity
        self._stat_path = stat_path
        self._t: list[float] = []
        self._cores: list[list[float]] = []
        # pid -> [start index, values]
        self._series: dict[int, tuple[int, list[float]]] = {}
        self._last_t: float | None = None
        self._last_cores: list[tuple[int, int]] = []
        self._last_cpu: dict[int, float] = {}
        # pid -> (rchar, wchar, read_bytes, write_bytes) last read, and the series of the rates
        self.io: dict[int, tuple[int, int, int, int]] = {}
        self._io_rates: dict[int, tuple[list[float], list[float]]] = {}

    def __len__(self) -> int:
        return len(self._t)

    def due(self, now: float) -> bool:
        """Whether an interval has passed since the last kept sample (the first is always due)."""
        return self._last_t is None or now - self._last_t >= self.interval

    def sample(
        self,
        now: float,
        cpu_seconds: dict[int, float],
        read_io: Callable[[int], bytes | None] | None = None,
        *,
        final: bool = False,
    ) -> None:
        """``cpu_seconds``: each process's CPU seconds so far (user + system), those that ended
        since the last kept interval included (their final times); ``read_io``: a process's
        ``/proc/PID/io`` (None: not read). ``final``: the end of the run, kept however short the
        interval since the last one (else the CPU used in it, a worker's last items, is lost)."""
        if final:
            if self._last_t is None or now <= self._last_t:
                return  # nothing kept to end, or no time since
        elif not self.due(now):
            return
        cores = read_core_times(self._stat_path)
        previous_io = dict(self.io)
        if read_io is not None:
            self._read_io(read_io, cpu_seconds)
        if self._last_t is None:
            self._last_t, self._last_cores, self._last_cpu = now, cores, dict(cpu_seconds)
            return
        span = now - self._last_t
        index = len(self._t)
        self._t.append(round(now, 4))
        self._add_cores(cores, index)
        for pid, seconds in cpu_seconds.items():
            # a process first seen now was born in this interval: all its CPU is this interval's
            used = max(0.0, seconds - self._last_cpu.get(pid, 0.0))
            entry = self._series.get(pid)
            if entry is None:
                entry = self._series[pid] = (index, [])
            start, values = entry
            values.extend([0.0] * (index - start - len(values)))  # a gap: it was not read then
            values.append(round(used / span, 4))
            counters = self.io.get(pid)
            if counters is not None:
                self._add_io(pid, counters, previous_io.get(pid, (0, 0, 0, 0)), len(values), span)
        self._last_t, self._last_cores, self._last_cpu = now, cores, dict(cpu_seconds)
        if len(self._t) >= self._capacity:
            self._thin()

    def _read_io(self, read_io: Callable[[int], bytes | None], pids: Iterable[int]) -> None:
        for pid in pids:
            counters = parse_io(read_io(pid))
            if counters is not None:
                self.io[pid] = counters

    def _add_cores(self, cores: list[tuple[int, int]], index: int) -> None:
        """Each core's busy share over the interval (its last one again where the CPUs changed)."""
        if len(cores) != len(self._last_cores):
            for series in self._cores:
                series.append(series[-1] if series else 0.0)
            return
        shares = [
            round((b - b0) / (t - t0), 4) if t > t0 else 0.0
            for (b, t), (b0, t0) in zip(cores, self._last_cores, strict=True)
        ]
        if len(self._cores) != len(shares):  # first interval, or the CPUs changed: start again
            self._cores = [[0.0] * index for _ in shares]
        for series, share in zip(self._cores, shares, strict=True):
            series.append(share)

    def _add_io(
        self, pid: int, counters: tuple[int, ...], before: tuple[int, ...], length: int, span: float
    ) -> None:
        """A process's read and write rates over the interval, its series ``length`` long."""
        reads, writes = self._io_rates.setdefault(pid, ([], []))
        for rates, i in ((reads, 0), (writes, 1)):
            rates.extend([0.0] * (length - 1 - len(rates)))
            rates.append(round(max(0, counters[i] - before[i]) / span, 1))

    def _thin(self) -> None:
        n = len(self._t)
        self._t = [self._t[min(i + 1, n - 1)] for i in range(0, n, 2)]
        self._cores = [_merge(0, series)[1] for series in self._cores]
        self._io_rates = {
            pid: (_merge(self._series[pid][0], r)[1], _merge(self._series[pid][0], w)[1])
            for pid, (r, w) in self._io_rates.items()
        }
        self._series = {pid: _merge(start, values) for pid, (start, values) in self._series.items()}
        self.interval *= 2

    def build(self) -> CpuUsage:
        from memgauge.model import CpuUsage

        busiest = sorted(self._series.items(), key=lambda kv: -sum(kv[1][1]))[:MAX_PROCESSES]
        ordered = sorted(busiest, key=lambda kv: (kv[1][0], kv[0]))
        return CpuUsage(
            interval_seconds=self.interval,
            t_seconds=list(self._t),
            cores=[list(series) for series in self._cores],
            processes=[self._process(pid, start, values) for pid, (start, values) in ordered],
        )

    def _process(self, pid: int, start: int, values: list[float]) -> CpuProcessSeries:
        from memgauge.model import CpuProcessSeries

        out = CpuProcessSeries(pid=pid, start_index=start, cores=list(values))
        reads, writes = self._io_rates.get(pid, ([], []))
        out.read_per_second, out.written_per_second = list(reads), list(writes)
        counters = self.io.get(pid)
        if counters is not None:
            out.rchar, out.wchar, out.read_bytes, out.write_bytes = counters
        return out
