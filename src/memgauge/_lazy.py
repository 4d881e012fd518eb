"""Lazy public faces: a package's names load from its private modules on first use.

Used by the packages whose import must stay cheap (``capture`` runs in the measured process before
its program starts; ``watcher``, ``isolation`` and ``runner`` run before ``memgauge run`` starts
the program). A loaded name is cached in the package, so later lookups are plain attributes.
"""

from __future__ import annotations

import importlib
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def attach(package: str, names: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose public ``names`` map to the private
    module (relative to the package, e.g. ``"_phases"``) that defines each."""

    def getattr_(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def dir_() -> list[str]:
        return sorted(names)

    return getattr_, dir_
