"""How a program is run: ``RunOptions``, which every caller of ``run_program`` builds and the
runner, the assembly and the fit search read. Its own module, so that those who read it need not
import the runner (no circle, type-only imports counted)."""

from __future__ import annotations

import os
import time

from memgauge._env import ENV_LINE_SAMPLER
from memgauge.isolation import HardLimits, NoIsolation

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from memgauge.isolation import Isolation, SandboxRun


class RunOptions:
    """How to run: ``interval`` first sampling interval (s); ``cgroup`` auto | v2 | v1 | off;
    ``memory_limit_bytes`` enforced through the cgroup (LimitError when none can be made);
    ``lines`` on | lib | off: line sampling in the program's Python processes, ``lib`` keeping
    library frames instead of folding them into the user's; ``alloc``: allocation tracking (memray);
    ``enforce``: hard limits the program is stopped at; ``sandbox``: run the program sandboxed
    (``memgauge.isolation``: namespaces, mounts, an unprivileged uid, process and output limits, a
    scrubbed environment, which ``env`` and ``cwd`` give way to), as ``sweep.execute_job`` plans it;
    ``join_groups``: ``cgroup.procs`` files of groups the caller made (a CPU quota that emulates a
    smaller machine) that the child enters before it starts, with its memory group;
    ``line_sampler``: auto | outside | inside: the lines read from outside the program by py-spy
    (no GIL needed: a long C call is seen running) where ptrace rights allow (``auto`` and
    ``outside``), or by a thread inside each process (``inside``, the default, and ``auto`` where
    py-spy may not read it or a sandbox runs it); ``MEMGAUGE_LINE_SAMPLER`` sets it.
    """

    def __init__(
        self,
        *,
        interval: float = 0.01,
        cgroup: str = "auto",
        timeline_capacity: int = 2048,
        memory_limit_bytes: int | None = None,
        lines: str = "on",
        alloc: bool = False,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        enforce: HardLimits | None = None,
        sandbox: SandboxRun | None = None,
        join_groups: tuple[str, ...] = (),
    ) -> None:
        self.interval = interval
        self.cgroup = cgroup
        self.timeline_capacity = timeline_capacity
        self.memory_limit_bytes = memory_limit_bytes
        self.lines = lines
        self.alloc = alloc
        self.env = env
        self.cwd = cwd
        self.clock = clock
        self.enforce = enforce
        self.sandbox = sandbox
        # the cgroup.procs files of groups the caller made (a CPU quota) the child enters too
        self.join_groups = join_groups
        # "" (the default: inside, until a short C call right after a busy line is placed as well
        # from outside as inside, docs/measurement.md) | auto | outside | inside
        self.line_sampler = os.environ.get(ENV_LINE_SAMPLER, "")
        # off | summary | full: the torch tracker, started when the program imports torch
        self.torch = "summary"
        # when memgauge's process started (monotonic; ``process_started``): its start-up is then
        # this run's, timed in the profile; None for a run made by a longer-lived process
        self.process_start: float | None = None
        # modules the caller uses once the run is over (the report's renderer), loaded beside
        # the assembly's while the program runs rather than after it (``_overhead.prewarm``)
        self.prewarm: tuple[str, ...] = ()

    def isolation(self) -> Isolation:
        """What stands between the program and the host: the sandbox the plan describes, else
        nothing (the program runs in ``env`` and ``cwd``, or memgauge's own)."""
        if self.sandbox is None:
            return NoIsolation(self.env, self.cwd)
        from memgauge.isolation import SandboxIsolation

        return SandboxIsolation(self.sandbox)
