"""Import footprint: time and resident growth of the first import of each top-level package.

``builtins.__import__`` is wrapped; an import of a module already in ``sys.modules`` (the common
case, also every import statement run inside a function) costs one dictionary lookup more. The
figures of a package include the packages it imported first (pandas includes numpy); the ``self``
figures exclude them. Relative imports and imports that fail are not recorded.
"""

from __future__ import annotations

import _thread
import builtins
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class ImportTracker:
    """Records into ``records()``, a list of rows of the wire format's ``IMPORT_ROW`` (``_wire``):
    ``[package, start, seconds, resident bytes, self seconds, self resident bytes]``, looked up at
    each import (a forked child records into its own)."""

    def __init__(self, resident: Callable[[], int], records: Callable[[], list[list[Any]] | None]) -> None:
        self.resident = resident
        self.records = records
        self.stacks: dict[int, list[_OpenImport]] = {}  # per thread: imports may run in several
        self.original: Any = None

    def install(self) -> None:
        if self.original is not None:
            return
        original = self.original = builtins.__import__
        modules = sys.modules
        tracked = self._tracked

        def __import__(  # noqa: N807 - it replaces the builtin of that name
            name: str,
            globals: Any = None,
            locals: Any = None,
            fromlist: Any = (),
            level: int = 0,
        ) -> Any:
            if level == 0 and name not in modules:
                top = name.partition(".")[0]
                if top not in modules:
                    return tracked(top, name, globals, locals, fromlist, level)
            return original(name, globals, locals, fromlist, level)

        builtins.__import__ = __import__

    def _tracked(self, top: str, name: str, globals_: Any, locals_: Any, fromlist: Any, level: int) -> Any:
        # not the program's: imports made by memgauge itself, by the runpy it runs the program
        # with (running a script directly imports nothing for it), or by the interpreter before
        # any code ran, and everything they import in turn
        # C code importing with no Python frame passes globals without a __name__
        importer = globals_.get("__name__") if isinstance(globals_, dict) else None
        if importer == "__main__":  # memgauge's bootstrap runs as __main__ too (python -m)
            spec = globals_.get("__spec__")
            importer = getattr(spec, "name", None) or importer
        stack = self.stacks.setdefault(_thread.get_ident(), [])
        ignored = (
            stack[-1].ignored
            if stack
            else importer is None or importer in ("runpy", "memgauge") or importer.startswith("memgauge.")
        )
        current = _OpenImport(ignored)
        stack.append(current)
        start, resident = time.monotonic(), self.resident()
        ok = False
        try:
            module = self.original(name, globals_, locals_, fromlist, level)
            ok = True
            return module
        finally:
            stack.pop()
            seconds = time.monotonic() - start
            grown = self.resident() - resident
            records = self.records()
            if ok and not ignored and top in sys.modules and records is not None:
                if stack:
                    stack[-1].nested_seconds += seconds
                    stack[-1].nested_bytes += grown
                records.append(
                    [
                        top,
                        start,
                        seconds,
                        grown,
                        seconds - current.nested_seconds,
                        grown - current.nested_bytes,
                    ]
                )


class _OpenImport:
    __slots__ = ("ignored", "nested_bytes", "nested_seconds")

    def __init__(self, ignored: bool) -> None:
        self.ignored = ignored
        self.nested_seconds = 0.0
        self.nested_bytes = 0
