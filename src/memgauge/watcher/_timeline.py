"""A timeline that stays small however long the run.

Sampling starts fast (``interval``, 10 ms by default). When ``capacity`` samples are held, adjacent
pairs are merged (resident values by maximum, so a spike survives; cumulative CPU by the later value)
and the sampling interval doubles. A one-hour run therefore keeps between ``capacity/2`` and
``capacity`` samples, about 1.8 s apart, and the profile stays a few hundred KB.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.model import Timeline

# plain classes, and the Profile types only in build(): the runner imports this module before it
# starts the program, so that the first sample is taken at once


class _Series:
    __slots__ = ("pid", "start", "values")

    def __init__(self, pid: int, start: int) -> None:
        self.pid, self.start = pid, start
        self.values: list[int] = []


def _halve(start: int, values: list[int]) -> tuple[int, list[int]]:
    """Merge a series living at global indices start.. into pairs (2j, 2j+1) by maximum."""
    out: list[int] = []
    for i, v in enumerate(values):
        if (start + i) % 2 == 0 or i == 0:
            out.append(v)
        else:
            out[-1] = max(out[-1], v)
    return start // 2, out


class TimelineBuilder:
    def __init__(self, interval: float = 0.01, capacity: int = 2048, max_interval: float = 5.0) -> None:
        if capacity < 4 or capacity % 2:
            raise ValueError("capacity must be an even number >= 4")
        self.interval = interval
        self._max_interval = max_interval
        self._capacity = capacity
        self._t: list[float] = []
        self._tree: list[int] = []
        self._cgroup: list[int] | None = None
        self._user: list[float] = []
        self._system: list[float] = []
        self._live: dict[int, _Series] = {}
        self._done: list[_Series] = []

    def __len__(self) -> int:
        return len(self._t)

    def add(
        self,
        t: float,
        tree_resident: int,
        cpu_user: float,
        cpu_system: float,
        per_process: dict[int, int],
        cgroup_bytes: int | None = None,
    ) -> None:
        index = len(self._t)
        self._t.append(t)
        self._tree.append(tree_resident)
        self._user.append(cpu_user)
        self._system.append(cpu_system)
        if cgroup_bytes is not None:
            if self._cgroup is None:
                self._cgroup = [0] * index
            self._cgroup.append(cgroup_bytes)
        elif self._cgroup is not None:
            self._cgroup.append(self._cgroup[-1] if self._cgroup else 0)
        for pid in [p for p in self._live if p not in per_process]:
            self._done.append(self._live.pop(pid))
        for pid, rss in per_process.items():
            series = self._live.get(pid)
            if series is None:
                series = self._live[pid] = _Series(pid, index)
            series.values.append(rss)
        if len(self._t) >= self._capacity:
            self._thin()

    def _thin(self) -> None:
        n = len(self._t)
        pairs = range(0, n, 2)
        self._t = [self._t[i] for i in pairs]
        self._tree = [max(self._tree[i : i + 2]) for i in pairs]
        if self._cgroup is not None:
            self._cgroup = [max(self._cgroup[i : i + 2]) for i in pairs]
        self._user = [self._user[min(i + 1, n - 1)] for i in pairs]
        self._system = [self._system[min(i + 1, n - 1)] for i in pairs]
        for s in [*self._live.values(), *self._done]:
            s.start, s.values = _halve(s.start, s.values)
        self.interval = min(self.interval * 2, self._max_interval)

    def build(self) -> Timeline:
        from memgauge.model import ProcessSeries, Timeline

        series = sorted([*self._done, *self._live.values()], key=lambda s: (s.start, s.pid))
        return Timeline(
            interval_seconds=self.interval,
            t_seconds=list(self._t),
            tree_resident_bytes=list(self._tree),
            cgroup_bytes=None if self._cgroup is None else list(self._cgroup),
            cpu_user_seconds=list(self._user),
            cpu_system_seconds=list(self._system),
            processes=[
                ProcessSeries(pid=s.pid, start_index=s.start, resident_bytes=list(s.values)) for s in series
            ],
        )
