"""Which stacks hold a process's resident memory: the line sampler's ledger.

The sampler credits each growth of resident memory to the stack that ran meanwhile. A release takes
back the latest credits first (last in, first out), so ``retained`` always says whose growth is
still resident; the sampler keeps a copy of it at its highest sample, which says which lines hold
the process's peak. For each line the ledger also keeps its *inclusive* retained bytes (its own and
what the functions it called still retain) over time, in a series of bounded length: what leak
detection fits.

Plain classes, no imports: this module is loaded into every measured process.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    Key = tuple[str, int, str]

# points kept per line's series: past it, every other point goes (the spacing doubles)
SERIES_POINTS = 128
# entries past which the ledger merges the entries of each stack: bounded memory on long runs
LEDGER_MAX = 4096


class Ledger:
    def __init__(self) -> None:
        self.stack_ids: dict[tuple[Key, ...], int] = {}
        self.stacks: list[tuple[Key, ...]] = []  # by stack id, each outermost frame first
        self.entries: list[list[int]] = []  # [stack id, bytes], oldest first
        self.retained: dict[int, int] = {}  # stack id -> bytes still resident
        self.inclusive: dict[Key, int] = {}
        self.series: dict[Key, list[tuple[float, int]]] = {}

    def stack_id(self, stack: tuple[Key, ...]) -> int:
        sid = self.stack_ids.get(stack)
        if sid is None:
            sid = len(self.stacks)
            self.stack_ids[stack] = sid
            self.stacks.append(stack)
        return sid

    def credit(self, sid: int, delta: int, t: float) -> None:
        """``delta`` bytes grown at time ``t`` while stack ``sid`` ran."""
        if self.entries and self.entries[-1][0] == sid:
            self.entries[-1][1] += delta
        else:
            self.entries.append([sid, delta])
            if len(self.entries) > LEDGER_MAX:
                self._compact()
        self._change(sid, delta, t)

    def retained_with(self, weights: list[tuple[list[Key], float]], extra: int) -> dict[int, int]:
        """What is retained by stack, with ``extra`` bytes more shared among the stacks of
        ``weights`` (innermost key first) in proportion to their weights: a peak a sample did
        not see, made by the lines that ran."""
        snapshot = dict(self.retained)
        total = sum(w for _, w in weights)
        for keys, w in weights:
            sid = self.stack_id(tuple(reversed(keys)))
            snapshot[sid] = snapshot.get(sid, 0) + round(extra * w / total)
        return snapshot

    def release(self, amount: int, t: float) -> None:
        """``amount`` bytes released at time ``t``: taken from the latest credits."""
        while amount > 0 and self.entries:
            entry = self.entries[-1]
            take = min(entry[1], amount)
            entry[1] -= take
            amount -= take
            self._change(entry[0], -take, t)
            if entry[1] == 0:
                self.entries.pop()

    def _change(self, sid: int, delta: int, t: float) -> None:
        left = self.retained.get(sid, 0) + delta
        if left:
            self.retained[sid] = left
        else:
            self.retained.pop(sid, None)
        for key in set(self.stacks[sid]):
            value = self.inclusive.get(key, 0) + delta
            self.inclusive[key] = value
            points = self.series.get(key)
            if points is None:
                points = self.series[key] = []
            points.append((t, value))
            if len(points) > SERIES_POINTS:
                del points[-2::-2]  # every other point, keeping the latest: the spacing doubles

    def _compact(self) -> None:
        # merge entries of one stack at the position of its latest: bounded memory, and the
        # last-in-first-out order is kept for what is recent
        merged: dict[int, int] = {}
        for sid, size in self.entries:
            merged[sid] = merged.pop(sid, 0) + size
        self.entries = [[sid, size] for sid, size in merged.items() if size > 0]
