"""What the sections watch beside the program while it runs (their "watch" parts,
``memgauge.sections``: the GPU section's NVML sampler), started right after the spawn and stopped
once the program ended, by the registry: the runner names no section."""

from __future__ import annotations

from memgauge.sections import ordered

TYPE_CHECKING = False  # not typing's: a run imports no typing (docs/benchmarks.md)
if TYPE_CHECKING:
    from typing import Any


class Watched:
    """What one section's watch saw: ``seen`` (None where it could not watch), ``why`` (the
    measurement line saying why not, or what it saw where the section says no more) and
    ``source``, the run's source it makes where it saw something (the sections whose ``sources``
    name it assemble)."""

    __slots__ = ("seen", "source", "why")

    def __init__(self, seen: Any, why: str, source: str) -> None:
        self.seen, self.why, self.source = seen, why, source


def watch_parts() -> list[tuple[str, Any]]:
    """Each section's "watch" part, imported: before the spawn, so that their modules do not load
    between the watcher's first samples of a program that may not live long."""
    parts = ((spec.name, spec.part("watch")) for spec in ordered())
    return [(name, part) for name, part in parts if part is not None]


def start_watches(parts: list[tuple[str, Any]], main_pid: int) -> list[tuple[str, Any, Any]]:
    """Each watch started: (section name, its part, the watch or why there is none)."""
    return [(name, part, part.start(main_pid)) for name, part in parts]


def stop_watches(started: list[tuple[str, Any, Any]]) -> dict[str, Watched]:
    """What each watch saw, by section name."""
    out = {}
    for name, part, watch in started:
        if isinstance(watch, str):
            out[name] = Watched(None, watch, part.SOURCE)
        else:
            out[name] = Watched(watch.stop(), part.UNSEEN, part.SOURCE)
    return out
