"""What a container needs, for an in-process block (``memgauge.profile()``).

The outside watcher's figure (its file working set: docs/measurement.md, "The headline") needs
another process to read ``/proc/PID/smaps`` and clear accessed bits while the block runs; inside
the process that would cost the measured code its own CPU and GIL. Cheap here is the block's own
peak: this process's ``VmHWM`` (exact) and the sampled descendants, every mapped library page
included, so it errs high where libraries are a large share of a small program.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.model import Peak

NEEDS_METHOD = "block peak (in-process)"


def record_needs(peak: Peak) -> None:
    """Set ``peak``'s need to the block's peak (``resident_bytes``), its method said; the parts of
    a sample (anonymous, file, shmem) are not known in-process and stay 0 (``needs_at_seconds``
    None)."""
    peak.needs_bytes = peak.resident_bytes
    peak.needs_method = NEEDS_METHOD
