"""Which training steps the torch tracker follows tensor by tensor (summary mode).

Tracking every storage costs a few microseconds per tensor; on a loop of short steps (11 ms, a
few small modules) that was 7-16% of the loop (docs/benchmarks.md), against a 3% target. Steady
steps repeat one another, so the tracker follows the first ``FIRST`` steps (warm-up and the first
steady ones), then one step in ``EVERY``, and, once the process's memory at a step's end rose
``RISE_MIN`` bytes and ``RISE_SHARE`` above its highest level in those first steps or at the last
such rise (a leak, a longer sequence, a validation pass), the next ``HOLD`` steps, each further rise
extending that; the level is read every ``MEMORY_EVERY`` seconds or ``MEMORY_STEPS`` steps. The first
steps' own rises (optimizer state, the allocator's first growth) are warm-up, followed already: on
the bench loop they held the tracker on for 20 more steps, +0.6% of its time, in two runs of three.
Between tracked steps only the step's end is seen (its time, now and then its memory level); the
steps it skipped are counted (``steps_untracked``). ``MEMGAUGE_TORCH_STEPS=all`` follows every
step; a number N, one in N after the first ``FIRST``. Standard library only.
"""

from __future__ import annotations

import os

from memgauge._env import ENV_TORCH_STEPS
from memgauge.capture import STEADY_AFTER

FIRST = STEADY_AFTER  # the loop's warm-up, where the line sampler too samples most closely
EVERY = 50
HOLD = 20
RISE_MIN = 1 << 20
RISE_SHARE = 0.02
# the memory level is read at the end of a step that ends MEMORY_EVERY seconds or MEMORY_STEPS steps
# after the last read: read at every end of the bench loop's 6.5 ms steps, it was 30 us a step (the
# Python of a process whose caches the step has just filled)
MEMORY_EVERY = 0.05
MEMORY_STEPS = 4


_PAGE = os.sysconf("SC_PAGE_SIZE")


class ResidentReader:
    """The process's resident bytes from ``/proc/self/statm``, on a descriptor kept open."""

    def __init__(self) -> None:
        # an fd on /proc/self/statm reads its opener: a forked child opens its own (not getpid()
        # at each read: a system call, in a loop's every few steps)
        self._fd = -1
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def read(self) -> int:
        """Resident bytes; -1 when unreadable."""
        try:
            if self._fd < 0:
                self._fd = os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC)
            return int(os.pread(self._fd, 128, 0).split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            return -1


class StepSampling:
    """The policy, fed each ended step's index and memory level; pure, so tests drive it."""

    def __init__(self, first: int = FIRST, every: int = EVERY, hold: int = HOLD) -> None:
        self.first, self.every, self.hold = first, every, hold
        self.base = -1  # the memory level the next rise is measured from (< 0: none yet)
        self.until = -1  # steps up to this index are tracked after a rise
        self._memory_next = (-1, float("-inf"))  # the step, the time at which it is read next

    @classmethod
    def from_env(cls) -> StepSampling:
        """The policy ``MEMGAUGE_TORCH_STEPS`` asks for (``all``, or one step in N); the default
        otherwise, and for a value that is neither."""
        value = os.environ.get(ENV_TORCH_STEPS, "").strip().lower()
        if value == "all":
            return cls(every=1)
        if value.isdigit() and int(value) >= 1:
            return cls(every=int(value))
        return cls()

    def memory_due(self, ended: int, now: float) -> bool:
        """Whether step ``ended``, ending at ``now`` (seconds, any clock), reads the memory level:
        ``MEMORY_EVERY`` seconds or ``MEMORY_STEPS`` steps after the last read, whichever comes
        first (a rise is seen at most that late)."""
        step, at = self._memory_next
        if ended < step and now < at:
            return False
        self._memory_next = (ended + MEMORY_STEPS, now + MEMORY_EVERY)
        return True

    def next_tracked(self, ended: int, memory: int) -> bool:
        """Whether the step after step ``ended`` is tracked, ``memory`` the process's bytes at the
        end of step ``ended`` (negative when unknown)."""
        if memory >= 0:
            if self.base < 0 or ended < self.first - 1:
                self.base = max(self.base, memory)
            elif memory > self.base + max(RISE_MIN, self.base * RISE_SHARE):
                # a new high, not a return to an old one: a loop whose level swings is not
                # followed on every swing
                self.until = ended + self.hold
                self.base = memory
        after = ended + 1
        return self.every <= 1 or after < self.first or after % self.every == 0 or after <= self.until
