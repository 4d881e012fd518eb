"""Whether the GPU section has anything to report on a profile, answered without importing its
analyses or report blocks (~8 ms with their records): most runs use no GPU."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.model import Profile


def shows(profile: Profile) -> bool:
    """False where every one of the section's report builders returns None: a GPU was seen, or
    torch ran (its report then says why no GPU was seen)."""
    return bool(profile.gpu) or profile.torch is not None
