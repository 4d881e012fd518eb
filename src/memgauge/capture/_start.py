"""Starts memgauge's capture inside a measured Python process, as the runner's environment asks:
line sampling and import footprint (``MEMGAUGE_LINES``), allocation tracking (``MEMGAUGE_ALLOC``),
torch tensors by role once the program imports torch (``MEMGAUGE_TORCH``).
Called by the bootstrap and by the ``sitecustomize`` every Python process of the run imports."""

from __future__ import annotations

import os

from memgauge._env import ENV_EVENTS_DIR

_started_in = -1
# the program's globals (``_child``: runpy's copy), kept to the end as a directly run script's are:
# dropped they would free what the program holds before the exit handlers (the sampler's final
# sample among them) see it. Cleared after the last of memgauge's, with the dict the script ran in
# (its functions' ``__globals__``, in a cycle with them): left, only the collector's last pass at
# shutdown freed them, object by object (+0.9 s on 2 million dicts, where python clears a script's
# globals and frees them by reference counts)
kept_globals: list[dict[str, object]] = []


def _let_go() -> None:
    while kept_globals:
        kept = kept_globals.pop()
        ran_in = {id(kept): kept}
        for value in list(kept.values()):
            methods = list(vars(value).values()) if isinstance(value, type) else []
            for fn in (value, *methods):
                found = getattr(fn, "__globals__", None)
                if isinstance(found, dict) and found.get("__name__") == "__main__":
                    ran_in[id(found)] = found
        for namespace in ran_in.values():
            # as python clears a module: "_" names first, then the rest, __builtins__ kept
            for first in (True, False):
                for name in [n for n in namespace if n != "__builtins__" and n.startswith("_") == first]:
                    namespace[name] = None


def start_all() -> None:
    """Idempotent; forked children are handled by the parts themselves."""
    global _started_in
    directory = os.environ.get(ENV_EVENTS_DIR, "")
    if not directory or _started_in >= 0:
        return
    _started_in = os.getpid()
    import atexit

    atexit.register(_let_go)  # first: it runs after every exit handler memgauge registers
    from memgauge.capture import _knobs

    # first: the program may read a swept variable as soon as it starts
    _knobs.start(directory)
    from memgauge._env import ENV_ALLOC

    if os.environ.get(ENV_ALLOC) == "1":
        # first: memray's imports, and those its tracker makes as it starts, are not the program's
        from memgauge.capture import _alloc

        _alloc.start(directory)
    from memgauge.capture import _sampling

    if _sampling.start_from_env() is not None:
        from memgauge.capture import _own_cpu
        from memgauge.capture._imports import ImportTracker

        def sampler_cpu() -> float:
            # the sampler reads its thread's CPU clock at each sample (its own time is no line's)
            sampler = _sampling.active_sampler()
            return sampler.own_cpu_ns / 1e9 if sampler is not None else 0.0

        _own_cpu.register("line sampler thread", sampler_cpu)

        def resident() -> int:
            sampler = _sampling.active_sampler()
            return sampler.resident() if sampler is not None else 0

        def records() -> list[list[object]] | None:
            sampler = _sampling.active_sampler()
            return sampler.imports if sampler is not None else None

        ImportTracker(resident, records).install()
    from memgauge.sections import SECTIONS

    # each section's start in the measured process, by the registry: the torch section's is a
    # finder that waits for the program's own `import torch` (MEMGAUGE_TORCH=off: nothing), the
    # training section's one that waits for `import multiprocessing` (bytes pickled between
    # processes)
    for spec in SECTIONS:
        start = spec.part("capture")
        if start is not None:
            start(directory)
    from memgauge._env import ENV_REMEDY

    if os.environ.get(ENV_REMEDY):
        from memgauge.capture import _remedies_tabular

        # `fit --remedies dtypes` only: a finder that waits for the program's own `import pandas`
        _remedies_tabular.install()
