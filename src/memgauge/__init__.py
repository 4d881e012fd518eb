"""memgauge: how much memory and time your Python code needs, where it goes, and whether it fits.

The public API. ``memgauge.phase`` is imported eagerly because measured programs call it on hot
paths; everything else loads on first use so ``import memgauge`` stays cheap inside the processes
memgauge measures.
"""

from __future__ import annotations

from memgauge._version import __version__
from memgauge.capture._phases import phase

# not `from typing import TYPE_CHECKING`: importing typing costs the measured process ~8 ms
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memgauge._errors import MemgaugeError
    from memgauge._profile import Profile, load_profile
    from memgauge.capture._inprocess import profile

__all__ = ["MemgaugeError", "Profile", "__version__", "load_profile", "phase", "profile"]

_LAZY = {
    "MemgaugeError": "memgauge._errors",
    "Profile": "memgauge._profile",
    "load_profile": "memgauge._profile",
    "profile": "memgauge.capture._inprocess",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'memgauge' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
