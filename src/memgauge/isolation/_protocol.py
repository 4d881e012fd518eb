"""The seam between the runner and isolation: the ``Isolation`` protocol; ``NoIsolation``, the
default of a plain ``memgauge run`` (the program runs as memgauge's child, in memgauge's
environment and working directory, or the ones the caller gave); and the ``HardLimits`` that pass
through it (asked for by ``memgauge check --enforce``, tightened by a sandbox's own, enforced by
the runner's watchdog).

``run_program`` calls an isolation's methods in the order they are defined here, ``close`` always;
the sandbox (``SandboxIsolation``) is the other implementation. This module is imported before
``memgauge run`` starts the program, as one module: nothing but the standard library's light
modules, plain classes, no dataclass.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time

from memgauge._errors import InternalError, OutputError
from memgauge._files import remove_tree
from memgauge.capture import orphaned_entries

# not typing's: the runner loads this module before it starts the program, and typing costs ~6 ms
# to import; ``Isolation`` is a plain class when it runs (nothing derives from it)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager
    from typing import Protocol

    from memgauge.model import Profile
    from memgauge.watcher import MemoryGroup
else:
    Protocol = object


class HardLimits:
    """Limits a run is stopped at as soon as one is crossed (``memgauge check --enforce``).

    ``memory_bytes``: the cgroup's limit where one can be made (the kernel stops the program at
    that byte), and a watchdog on every sample besides (the only guard without a cgroup: a spike
    shorter than a sample can pass it). ``wall_seconds`` and ``cpu_seconds`` (the tree's): the
    watchdog. Enforcing caps the sampling interval at ``WATCHDOG_INTERVAL``.
    """

    WATCHDOG_INTERVAL = 0.02

    def __init__(
        self,
        *,
        memory_bytes: int | None = None,
        wall_seconds: float | None = None,
        cpu_seconds: float | None = None,
    ) -> None:
        self.memory_bytes = memory_bytes
        self.wall_seconds = wall_seconds
        self.cpu_seconds = cpu_seconds

    def crossed(self, resident: int, elapsed: float, cpu: float) -> str | None:
        """Why the run must stop now, or None."""
        from memgauge._units import format_bytes, format_seconds

        if self.memory_bytes is not None and resident > self.memory_bytes:
            return f"rss {format_bytes(resident)} crossed the limit {format_bytes(self.memory_bytes)}"
        if self.wall_seconds is not None and elapsed > self.wall_seconds:
            return f"wall time crossed the limit {format_seconds(self.wall_seconds)}"
        if self.cpu_seconds is not None and cpu > self.cpu_seconds:
            return f"CPU time {format_seconds(cpu)} crossed the limit {format_seconds(self.cpu_seconds)}"
        return None

    def tightened(self, *, memory_bytes: int | None = None, wall_seconds: float | None = None) -> HardLimits:
        """These limits with ``memory_bytes`` and ``wall_seconds`` as further bounds: the lower
        of the two wins where both are set."""
        memory = _lower(self.memory_bytes, memory_bytes)
        return HardLimits(
            memory_bytes=None if memory is None else int(memory),
            wall_seconds=_lower(self.wall_seconds, wall_seconds),
            cpu_seconds=self.cpu_seconds,
        )


def _lower(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


class Isolation(Protocol):
    """What stands between the program and the host, for one run."""

    def enter(self, limits: HardLimits | None) -> HardLimits | None:
        """First of all, before the memory cgroup is made (a sandbox's mounts decide what the
        rest sees). Returns the limits the watchdog enforces: ``limits`` (the caller's) tightened
        by the isolation's own."""
        ...

    def prepare(
        self, group: MemoryGroup | None, group_reason: str, by_group: bool
    ) -> tuple[str, dict[str, str]]:
        """Once the memory cgroup is made or refused (``group_reason``; ``by_group``: it holds
        the memory limit): the directory the program's measurement writes to, which the program
        must be able to write, and the program's environment, which the runner completes."""
        ...

    def spawn(
        self, argv: list[str], env: dict[str, str], preexec: Callable[[], None]
    ) -> subprocess.Popen[bytes]:
        """Start the program. ``preexec`` runs in the child before the isolation's own part.
        Raises what ``Popen`` raises for a command that cannot run, and ``InternalError`` when
        the child could not be set up."""
        ...

    def crossed(self) -> str | None:
        """Why the run must stop now, by a limit the runner's own watchdog does not know
        (checked on every watchdog sample), or None."""
        ...

    def program_ended(self, reap: Callable[[], None]) -> None:
        """The program ended: what must happen before the runner reads what it wrote. ``reap``
        reaps whatever of the run has ended since."""
        ...

    def reading_as_program(self) -> AbstractContextManager[None]:
        """Held while the runner reads what the program wrote."""
        ...

    def finish(self, profile: Profile) -> None:
        """What the isolation applied, and what the run ran into, into the profile."""
        ...

    def close(self) -> None:
        """Always, last, whether the run started or not: nothing of the run outlives it."""
        ...


_EVENTS_PREFIX = "memgauge-events-"


class NoIsolation:
    """The program runs as memgauge's own child: ``env`` (else memgauge's environment) and
    ``cwd`` (else memgauge's working directory); only its measurement directory is made for it."""

    def __init__(self, env: dict[str, str] | None = None, cwd: str | None = None) -> None:
        self.env = env
        self.cwd = cwd
        self._events_dir: str | None = None

    def enter(self, limits: HardLimits | None) -> HardLimits | None:
        return limits

    def prepare(
        self, group: MemoryGroup | None, group_reason: str, by_group: bool
    ) -> tuple[str, dict[str, str]]:
        # absolute: the program may change its working directory before it writes an event
        base = os.path.abspath(os.environ.get("TMPDIR") or "/tmp")
        for stale in orphaned_entries(base, _EVENTS_PREFIX):
            remove_tree(stale)  # where a crashed run left a directory behind
        path = os.path.join(base, f"{_EVENTS_PREFIX}{os.getpid()}-{time.monotonic_ns()}")
        try:
            os.mkdir(path, 0o700)
        except OSError as e:
            raise OutputError(f"cannot create a working directory in {base}: {e.strerror}") from e
        self._events_dir = path
        return path, dict(os.environ if self.env is None else self.env)

    def spawn(
        self, argv: list[str], env: dict[str, str], preexec: Callable[[], None]
    ) -> subprocess.Popen[bytes]:
        try:
            # preexec_fn is safe here: memgauge has started no thread yet
            return subprocess.Popen(argv, env=env, cwd=self.cwd, preexec_fn=preexec)  # noqa: PLW1509
        except subprocess.SubprocessError as e:  # raised by preexec: joining a cgroup failed
            raise InternalError(f"cannot start the program in its cgroup ({e}); try --cgroup off") from e

    def crossed(self) -> str | None:
        return None

    def program_ended(self, reap: Callable[[], None]) -> None:
        pass

    def reading_as_program(self) -> AbstractContextManager[None]:
        return contextlib.nullcontext()

    def finish(self, profile: Profile) -> None:
        pass

    def close(self) -> None:
        if self._events_dir is not None:
            remove_tree(self._events_dir)
            self._events_dir = None
