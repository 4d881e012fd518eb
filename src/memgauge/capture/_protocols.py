"""Interfaces of the capture layer, for type checking only: the measured process never imports
this module (``typing.Protocol`` would cost it ~8 ms and memory)."""

from __future__ import annotations

from typing import Protocol

from memgauge.capture._phases import ClosedPhase, OpenPhase


class MemorySource(Protocol):
    """Where resident figures of the current process come from; tests inject exact ones."""

    def resident(self) -> int: ...

    def high_water(self) -> int: ...

    def reset_high_water(self) -> bool: ...


class PhaseSink(Protocol):
    def phase_started(self, phase: OpenPhase, high_water_before: int) -> None: ...

    def phase_ended(self, closed: ClosedPhase) -> None: ...

    def high_water_reset(self, high_water_before: int) -> None: ...
