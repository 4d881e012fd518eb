"""Whether the torch section has anything to report on a profile, answered without importing its
analyses or report blocks (~14 ms with their records): most runs never imported torch."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.model import Profile


def shows(profile: Profile) -> bool:
    """False where every one of the section's report builders returns None."""
    return profile.torch is not None
