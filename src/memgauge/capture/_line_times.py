"""When the main thread was on which line: the line sampler's time series, for GPU time per line.

The line sampler (``_sampler``) aggregates per line and keeps no time; NVML's utilisation is
sampled over time by the runner (``sections/gpu/_nvml_sampler``). To join the two, the sampler also
gives each sample's interval (``t - wall``, ``t``], on ``CLOCK_MONOTONIC``, and the main thread's
line then, to a ``LineTimes``: the time is cut into buckets of ``width`` seconds from the first
sample (``origin``), and each bucket keeps the seconds each line was sampled in it. Memory is
bounded: past ``MAX_BUCKETS`` buckets, neighbours are merged by pairs and the width doubles (50 ms
buckets up to 100 s, then 100 ms, and so on: a run of an hour keeps 3.2 s buckets), as NVML's
series are thinned. Within a bucket a line's seconds are taken as spread evenly over it
(``analysis.gpu_time_per_line``), so the join's error is one bucket at each of a line's edges.

Written into the lines file (``_lines_write``) as the optional field ``LINE_TIMES``:
``{"origin": t, "width": seconds, "rows": [[bucket, key, seconds], ...]}`` (``TIME_ROW``, a key
an index into the file's ``keys``), an addition to wire version 2 that older readers ignore.
Standard library only: this module is loaded into every measured process.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    Key = tuple[str, int, str]

LINE_TIMES = "line_times"
TIME_ROW = ("bucket", "key", "seconds")
WIDTH = 0.05
MAX_BUCKETS = 2000


class LineTimes:
    def __init__(self, width: float = WIDTH, max_buckets: int = MAX_BUCKETS) -> None:
        self.width = width
        self.max_buckets = max_buckets
        self.origin = -1.0  # the first sample's start; < 0: no sample yet
        self.buckets: list[dict[Key, float]] = []

    def add(
        self, t: float, wall: float, stacks: Sequence[tuple[int, list[Key], object]], main: int | None
    ) -> None:
        """One sample of the line sampler: the interval (``t - wall``, ``t``] goes to the line the
        main thread (ident ``main``) is on, when it has Python frames."""
        for ident, keys, _ in stacks:
            if ident == main:
                self.charge(t - wall, t, keys[0])
                return

    def charge(self, start: float, end: float, key: Key) -> None:
        if self.origin < 0:
            self.origin = start
        buckets = self.buckets
        while start < end:
            b = int((start - self.origin) / self.width)
            while b >= self.max_buckets:
                self._thin()
                b = int((start - self.origin) / self.width)
                buckets = self.buckets
            edge = self.origin + (b + 1) * self.width
            part = min(end, edge) - start
            if part > 0:
                while len(buckets) <= b:
                    buckets.append({})
                bucket = buckets[b]
                bucket[key] = bucket.get(key, 0.0) + part
            start = max(edge, start + 1e-9)  # a float edge never stalls the walk

    def _thin(self) -> None:
        merged: list[dict[Key, float]] = []
        for i in range(0, len(self.buckets), 2):
            first = dict(self.buckets[i])
            for key, seconds in (self.buckets[i + 1] if i + 1 < len(self.buckets) else {}).items():
                first[key] = first.get(key, 0.0) + seconds
            merged.append(first)
        self.buckets = merged
        self.width *= 2

    def record(self, index: Callable[[Key], int]) -> dict[str, object] | None:
        """The wire format's ``LINE_TIMES`` object (keys numbered by ``index``), None before any sample."""
        if self.origin < 0:
            return None
        rows = [
            [b, index(key), round(seconds, 6)]
            for b, bucket in enumerate(self.buckets)
            for key, seconds in list(bucket.items())
        ]
        return {"origin": self.origin, "width": self.width, "rows": rows}


def line_spans(
    data: object, keys: Sequence[Key], pid: int, t0: float
) -> list[tuple[int, str, int, str, float, float, float]]:
    """A lines file's ``LINE_TIMES`` object read back: per bucket and line, ``(pid, file, line,
    function, start, end, seconds)``, times as seconds since ``t0`` (on the same clock). Raises
    KeyError, IndexError, TypeError or ValueError where it is not laid out as written."""
    if data is None:
        return []
    if not isinstance(data, dict):
        raise TypeError(f"{LINE_TIMES!r} is not an object")
    origin = float(data["origin"]) - t0
    width = float(data["width"])
    if width <= 0:
        raise ValueError(f"{LINE_TIMES!r} has a width of {width}")
    out = []
    for row in data["rows"]:
        b, k, seconds = row  # TIME_ROW
        file, line, function = keys[int(k)]
        start = origin + int(b) * width
        out.append((pid, file, line, function, round(start, 6), round(start + width, 6), float(seconds)))
    return out
