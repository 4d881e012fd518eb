"""The record of ``memgauge fit``: the largest value of one parameter whose run stays within a
budget, every trial that found it, and the run that verified it (docs/fit.md).

Written in the envelope every record has (``_envelope.py``): ``{"format": "memgauge-fit", "version":
2, ...}``, always with ``parameter``, ``value`` (None: nothing fits), ``runs`` and ``verified``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from memgauge._errors import ProfileFormatError
from memgauge.model._envelope import FIT

WHAT_IF = ("remedies", "prediction")


@dataclass(frozen=True)
class FitTrial:
    """One run at ``value``: ``figures`` the measured figure of each limited metric (bytes or
    seconds; a metric the run gave no figure for is absent); ``fits``: it ran to a clean exit with
    every figure within the limit the search aimed at; ``over``: the metrics above it; ``error``:
    why it does not count as fitting apart from the limits (a failed run); ``guided``: the value
    was chosen by the growth law (else by doubling or bisection)."""

    value: int
    figures: dict[str, float]
    fits: bool
    exit_code: int | None = None
    error: str | None = None
    seconds: float = 0.0
    over: tuple[str, ...] = ()
    guided: bool = False

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FitTrial:
        return cls(**{**data, "over": tuple(data.get("over", ()))})


@dataclass(frozen=True)
class NonMonotonic:
    """``value`` did what a program whose need grows with the value would not, given the smaller
    ``below``: it fits where ``below`` did not (``metric`` "fits"), or its figure of ``metric`` is
    lower (``figure`` against ``below_figure``)."""

    value: int
    below: int
    metric: str
    figure: float | None = None
    below_figure: float | None = None


@dataclass(frozen=True)
class FitVerification:
    """The answer run cold under the budget's memory limit as a hard limit (``limit_bytes``;
    None: there was no memory limit, a plain run): ``survived`` it, and ``verified``: survived
    with a clean exit and within every other limit (``over``: those it crossed). ``peak_bytes`` is
    the cgroup's peak under the limit, ``unlimited_peak_bytes`` the same run's without it."""

    value: int
    limit_bytes: int | None
    survived: bool
    verified: bool
    exit_code: int | None
    oom_kills: int
    limit_hits: int
    wall_seconds: float
    peak_bytes: int
    unlimited_peak_bytes: int
    runs: int
    over: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FitVerification:
        return cls(**{**data, "over": tuple(data.get("over", ()))})


@dataclass
class FitRecord:
    """``budget``: each limit as given (bytes or seconds, by metric); ``aims``: the limits the
    search held trials to (the budget less ``margin``); ``reason``: how the search ended
    ("boundary": ``value`` fits and ``value + 1`` does not; "tolerance": a value at most
    ``tolerance`` (a fraction) above ``value`` does not; "maximum fits"; "nothing fits";
    "too large"; "interrupted": Ctrl-C, ``value`` the largest proven to fit by then, unverified);
    ``start``: the first value tried, ``start_from`` where it came from ("--start", "the
    program's own value", "--min"); ``laws``: the law fitted to each metric over the trials, as
    text."""

    parameter: str
    value: int | None
    runs: int
    verified: bool
    command: list[str]
    budget: dict[str, float]
    aims: dict[str, float]
    margin: float
    low: int
    high: int | None
    reason: str
    tolerance: float = 0.0
    start: int | None = None
    start_from: str = ""
    trials: list[FitTrial] = field(default_factory=list)
    laws: dict[str, str] = field(default_factory=dict)
    non_monotonic: list[NonMonotonic] = field(default_factory=list)
    verification: FitVerification | None = None

    def to_dict(self) -> dict[str, Any]:
        return FIT.wrap(asdict(self))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FitRecord:
        fit = FIT.open(data)[1]
        # what --remedies and --predict-gpu add beside the fit's fields: figures of other runs,
        # shown by their own reports, not part of the search this record holds
        for name in WHAT_IF:
            fit.pop(name, None)
        verification = fit.get("verification")
        try:
            return cls(
                **{
                    **fit,
                    "trials": [FitTrial.from_dict(t) for t in fit.get("trials", [])],
                    "non_monotonic": [NonMonotonic(**n) for n in fit.get("non_monotonic", [])],
                    "verification": None if verification is None else FitVerification.from_dict(verification),
                }
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ProfileFormatError(f"malformed memgauge fit record: {e}") from e
