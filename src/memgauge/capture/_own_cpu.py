"""memgauge's own CPU time inside a measured process: each of its parts that runs a thread of its
own there (the line sampler, or whatever replaces it) registers how to read that thread's CPU
seconds, and the exit event reports them all (``_child``), so the profile can say what measuring
cost. Standard library only: it is imported before the program starts."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_readers: dict[str, Callable[[], float]] = {}


def register(what: str, read: Callable[[], float]) -> None:
    """``read()`` gives the CPU seconds ``what`` used so far in this process; the last one
    registered under a name wins (a part restarted in a forked child)."""
    _readers[what] = read


def own_cpu() -> dict[str, float]:
    """Each registered part's CPU seconds; a reader that fails is left out."""
    out: dict[str, float] = {}
    for what, read in list(_readers.items()):
        try:
            out[what] = float(read())
        except Exception:  # a part that cannot say is left out: the exit report stands
            continue
    return out
