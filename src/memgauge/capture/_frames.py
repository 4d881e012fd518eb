"""Which source files are the user's and which are libraries', for folding library frames into the
first user frame that called them. Imports only ``os`` and ``sys``: it runs in the measured process.

A file is a library's when it lies in the interpreter's own tree or a virtual environment's
``lib/pythonX.Y`` (standard library and installed packages), in any ``site-packages`` or
``dist-packages`` directory, or is not a file at all (``<frozen ...>``, ``<string>`` from ``exec``
is kept as the user's). memgauge's own files are neither: they are never shown.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import FrameType

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _library_roots() -> tuple[str, ...]:
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    roots = set()
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}:
        for lib in ("lib", "lib64"):
            roots.add(os.path.join(prefix, lib, version) + os.sep)
    return tuple(sorted(roots))


_ROOTS = _library_roots()
# multiprocessing starts spawn and forkserver children with `python -c "from multiprocessing...
# import ...; main(...)"`: that `<string>` is the library's start-up code, not the user's, and what
# it does (unpickling the task's arguments) is better told by the library frame doing it
_STRING_IS_LIBRARY = any(arg.startswith("from multiprocessing.") for arg in getattr(sys, "orig_argv", ()))
_MARKERS = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)


def is_own(filename: str) -> bool:
    """A file of memgauge itself (the bootstrap, the sampler)."""
    return filename.startswith(_PKG_DIR)


def is_library(filename: str) -> bool:
    if filename.startswith("<"):
        if filename == "<string>":
            return _STRING_IS_LIBRARY
        return not filename.startswith("<ipython")
    if filename.startswith(_ROOTS) or filename.startswith(_PKG_DIR):
        return True
    return any(m in filename for m in _MARKERS)


def forked_to_exec() -> bool:
    """Called from an at-fork hook in the child: True when the fork is ``subprocess``'s, which runs
    a ``preexec_fn`` and then execs: no sampler or tracker should start there (a thread started
    between fork and exec costs time and risks deadlocks, and the exec'd program starts its own)."""
    frame: FrameType | None = sys._getframe(1)
    for _ in range(8):
        if frame is None:
            return False
        if frame.f_code.co_name == "_execute_child" and frame.f_code.co_filename.endswith("subprocess.py"):
            return True
        frame = frame.f_back
    return False
