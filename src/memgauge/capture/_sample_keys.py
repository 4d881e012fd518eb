"""The pseudo-lines the line sampler (``_sampler``) charges what no line of the program made, and
the steps of a training loop's warm-up.

Plain constants, no imports: this module is loaded into every measured process.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    Key = tuple[str, int, str]

# the steps after which a loop is steady: its later steps repeat these, and the line sampler slows
# down (``_sampling.steady_loop``); the torch tracker follows these tensor by tensor (its ``FIRST``)
STEADY_AFTER = 10

STARTUP_KEY: Key = ("<startup>", 0, "interpreter start-up")
INHERITED_KEY: Key = ("<inherited>", 0, "memory of the parent at fork")
UNKNOWN_KEY: Key = ("<unknown>", 0, "no Python frame")
OWN_KEY: Key = ("<memgauge>", 0, "memgauge's own code")
# the baseline of a sampler started inside a running program (``memgauge.profile(lines=True)``):
# what the process held when the block began, which no line of the block made
BEFORE_KEY: Key = ("<before>", 0, "resident before the block")
# CPU time of threads without Python frames while no Python thread ran native code (a BLAS pool
# spinning after its call returned): charged to no line, so every line's time adds up to its wall
NATIVE_THREADS_KEY: Key = ("<native>", 0, "threads without Python frames")
