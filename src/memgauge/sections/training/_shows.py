"""Whether the training section has anything to report on a profile, answered without importing
its analyses or report blocks (~11 ms with their records): most runs have no training loop."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.model import Profile

# frameworks whose loops memgauge cannot follow: it hooks torch alone (docs/frameworks.md)
UNFOLLOWED = ("jax", "tensorflow")


def shows(profile: Profile) -> bool:
    """False where every one of the section's report builders returns None: no training record,
    no framework it does not follow among the imports, no phase whose I/O was read."""
    return (
        profile.training is not None
        or any(r.package in UNFOLLOWED for r in profile.imports)
        or any(p.rchar is not None for p in profile.phases)
    )
