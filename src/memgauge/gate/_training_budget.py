"""The training figures a budget can limit (``samples_per_s>=400``; docs/training.md): where each
is read in a profile, and why it is missing when it is."""

from __future__ import annotations

from memgauge.model import Profile

# metric -> the ``Training`` field it reads
TRAINING_METRICS = {
    "steps_per_s": "steps_per_second",
    "samples_per_s": "samples_per_second",
    "tokens_per_s": "tokens_per_second",
    "mfu": "mfu",
    "data_wait": "data_wait_share",
}
_MISSING = {
    "mfu": "the step's FLOPs or the device's peak are unknown",
    "data_wait": "no batch was seen being fetched",
}


def training_figure(profile: Profile, metric: str) -> tuple[float | None, str]:
    """The figure of ``metric`` (one of ``TRAINING_METRICS``) and a note: why it is None."""
    t = profile.training
    if t is None:
        return None, "no training steps were measured (docs/training.md)"
    value = getattr(t, TRAINING_METRICS[metric])
    if value is None:
        return None, _MISSING.get(metric, "too few steady steps")
    return float(value), ""
