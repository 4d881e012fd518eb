"""What the runner's main loop learns as the program runs: which processes ended, and how."""

from __future__ import annotations


class Reaped:
    __slots__ = ("at", "status", "system", "user")

    def __init__(self, status: int, user: float, system: float, at: float) -> None:
        self.status, self.user, self.system, self.at = status, user, system, at


class RunState:
    def __init__(self, main_pid: int) -> None:
        self.main_pid = main_pid
        self.reaped: dict[int, Reaped] = {}
        # why memgauge stopped the program (an enforced limit), or None
        self.stopped_by: str | None = None
        # from the main process's exit event: when the program's first line ran and its last
        # returned ("started", "ended", monotonic); each process's own CPU of memgauge's threads
        self.program_times: dict[str, float] = {}
        self.own_cpu: list[tuple[str, int, float]] = []

    @property
    def main_done(self) -> bool:
        return self.main_pid in self.reaped
