"""The training section's budget part (the registry's "budget"): the training figures a budget can
limit (``samples_per_s>=400``; docs/training.md): where each
is read in a profile, and why it is missing when it is."""

from __future__ import annotations

from memgauge.model import Profile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from memgauge.gate import CheckResult

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


METRICS = frozenset(TRAINING_METRICS)


def figure(profile: Profile, metric: str, phase: str | None) -> tuple[float | None, str]:
    """The figure of a training ``metric``: the whole loop's (a phase has none; the budget's
    parser refuses a training metric of a phase)."""
    return training_figure(profile, metric)


def judged(result: CheckResult, runs: Sequence[Profile]) -> CheckResult:
    """Nothing changes a training limit's result after it is judged."""
    return result


def training_figure(profile: Profile, metric: str) -> tuple[float | None, str]:
    """The figure of ``metric`` (one of ``TRAINING_METRICS``) and a note: why it is None."""
    t = profile.training
    if t is None:
        return None, "no training steps were measured (docs/training.md)"
    value = getattr(t, TRAINING_METRICS[metric])
    if value is None:
        return None, _MISSING.get(metric, "too few steady steps")
    return float(value), ""
