"""Which training steps the torch tracker follows tensor by tensor (summary mode).

Tracking every storage costs a few microseconds per tensor; on a loop of short steps (11 ms, a
few small modules) that was 7-16% of the loop (docs/benchmarks.md), against a 3% target. Steady
steps repeat one another, so the tracker follows the first ``FIRST`` steps (warm-up and the first
steady ones), then one step in ``EVERY``, and, once the process's memory at a step's end rose
``RISE_MIN`` bytes and ``RISE_SHARE`` above its highest level in those first steps or at the last
such rise (a leak, a longer sequence, a validation pass), the next ``HOLD`` steps, each further rise
extending that. The first steps' own rises (optimizer state, the allocator's first growth) are
warm-up, followed already: on the bench loop they held the tracker on for 20 more steps, +0.6% of
its time, in two runs of three. Between
tracked steps only the step's end is seen (its time, its memory level); the steps it skipped are
counted (``steps_untracked``). ``MEMGAUGE_TORCH_STEPS=all`` follows every step; a number N, one in N
after the first ``FIRST``. Standard library only.
"""

from __future__ import annotations

import os

ENV_TORCH_STEPS = "MEMGAUGE_TORCH_STEPS"
FIRST = 10
EVERY = 20
HOLD = 20
RISE_MIN = 1 << 20
RISE_SHARE = 0.02


class StepSampling:
    """The policy, fed each ended step's index and memory level; pure, so tests drive it."""

    def __init__(self, first: int = FIRST, every: int = EVERY, hold: int = HOLD) -> None:
        self.first, self.every, self.hold = first, every, hold
        self.base = -1  # the memory level the next rise is measured from (< 0: none yet)
        self.until = -1  # steps up to this index are tracked after a rise

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
