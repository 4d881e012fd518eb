"""memgauge: how much memory and time your Python code needs, where it goes, and whether it fits.

The public API. Every name loads on first use, so ``import memgauge`` stays cheap, both inside the
processes memgauge measures and in ``memgauge run`` before it starts the program. A loaded name is
cached in the module, so ``memgauge.phase`` on a hot path costs a plain attribute lookup.

PYTEST_DONT_REWRITE: the pytest plugin's entry point makes pytest mark this package for assertion
rewriting, and under ``memgauge run -- pytest`` the package is imported before pytest starts, which
pytest would warn about in every such session.
"""

from __future__ import annotations

from memgauge._version import __version__

# not `from typing import TYPE_CHECKING`: importing typing costs the measured process ~8 ms
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memgauge._errors import MemgaugeError
    from memgauge.capture import phase, record
    from memgauge.model import Profile, load_profile
    from memgauge.runner import profile
    from memgauge.sections.training import step, timed_iter

__all__ = [
    "MemgaugeError",
    "Profile",
    "__version__",
    "load_profile",
    "phase",
    "profile",
    "record",
    "step",
    "timed_iter",
]

_LAZY = {
    "MemgaugeError": "memgauge._errors",
    "Profile": "memgauge.model._profile",
    "load_profile": "memgauge.model._profile",
    "profile": "memgauge.runner._inprocess",
    "phase": "memgauge.capture._phases",
    "record": "memgauge.capture._record",
    # the end of a step where no optimizer marks it, or a count of a kind; a no-op when not measuring
    "step": "memgauge.sections.training._capture",
    # an iterator whose waits count as the loop's data wait (docs/training.md)
    "timed_iter": "memgauge.sections.training._capture",
    # `%load_ext memgauge` (IPython's extension protocol); not in __all__: not part of the Python API
    "load_ipython_extension": "memgauge.notebook",
    "unload_ipython_extension": "memgauge.notebook",
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
