"""Which line of the program started each child process: the process-creating calls (``os.fork``,
``os.posix_spawn``/``posix_spawnp`` and ``_posixsubprocess.fork_exec``, which ``subprocess`` and
multiprocessing's spawn use) are wrapped to note ``(child pid, the program's line)`` for the line
sampler's file.

Why: a child killed before its own sampler wrote anything (an OOM kill ~0.5 s in, a pool worker
terminated right after its task) leaves a peak and no lines. The runner's assembly then charges that
memory to the line that started the child, as the in-process mode charges its children to the line
running at the tree's peak, instead of dropping it from the attribution.

Imported into every measured process whose lines are sampled: standard library only.
"""

from __future__ import annotations

import os
import sys

from memgauge.capture._frames import is_library, is_own

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType
    from typing import Any

    Key = tuple[str, int, str]

# (child pid, the line that started it), appended from whatever thread started it
started: list[tuple[int, Key]] = []
_wrapped = False


def _line() -> Key | None:
    """The innermost frame of the program's own code on the calling thread's stack (library frames
    fold into the user line that called them, as the sampler folds them)."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if not is_own(name) and not is_library(name):
            return (name, frame.f_lineno, frame.f_code.co_name)
        frame = frame.f_back
    return None


def _noting(real: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        pid = real(*args, **kwargs)
        if isinstance(pid, int) and pid > 0:
            try:
                key = _line()
            except Exception:  # never into the program
                key = None
            if key is not None:
                started.append((pid, key))
        return pid

    call.__wrapped__ = real  # type: ignore[attr-defined]
    call.__name__ = getattr(real, "__name__", "call")
    call.__doc__ = getattr(real, "__doc__", None)
    return call


def wrap_process_starts() -> None:
    """Once per process; a fork child inherits the wrappers (and the flag), and starts its own
    list: what its parent started is in the parent's file."""
    global _wrapped
    if _wrapped:
        return
    _wrapped = True
    for name in ("fork", "posix_spawn", "posix_spawnp"):
        real = getattr(os, name, None)
        if real is not None:
            setattr(os, name, _noting(real))
    try:
        import _posixsubprocess
    except ImportError:
        return
    _posixsubprocess.fork_exec = _noting(_posixsubprocess.fork_exec)
    # subprocess binds fork_exec by name when imported: if it already was, the copy is rebound too
    sub = sys.modules.get("subprocess")
    if sub is not None and getattr(sub, "_fork_exec", None) is not None:
        sub._fork_exec = _posixsubprocess.fork_exec  # type: ignore[attr-defined]


def after_fork_in_child() -> None:
    started.clear()
