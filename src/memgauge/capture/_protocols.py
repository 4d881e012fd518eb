"""Interfaces of the capture layer, for type checking only: the measured process never imports
this module (``typing.Protocol`` would cost it ~8 ms and memory)."""

from __future__ import annotations

from typing import Protocol


class MemorySource(Protocol):
    """Where resident figures of the current process come from; tests inject exact ones."""

    def resident(self) -> int: ...

    def high_water(self) -> int: ...

    def reset_high_water(self) -> bool: ...
