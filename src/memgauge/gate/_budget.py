"""Budgets: limits on the resident peak, GPU peak, wall time and CPU time of a run or of a phase.

A budget is written as tokens separated by spaces or commas::

    rss=512MiB gpu=2GiB wall=60s cpu=30s disk=1GiB fit.rss=300MiB data.load.wall=5s

``metric=value`` limits the whole run; ``phase.metric=value`` one phase (by name; every record of
that name, in any process). A phase name may hold dots: the metric is what follows the last one.
Metric names are case-insensitive, phase names are not (they are the program's own). A limit is
inclusive: a run that measures exactly the limit is within it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace

from memgauge._errors import UsageError
from memgauge._units import (
    BYTE_UNITS_TEXT,
    SECOND_UNITS_TEXT,
    format_bytes,
    format_seconds,
    parse_bytes,
    parse_seconds,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

__all__ = ["METRICS", "Budget", "BudgetError", "Limit", "format_amount", "parse_budget"]

# metric -> the kind of figure it limits; the order is the order results are listed in
# ``disk``: what a sandboxed run wrote (its scratch space's peak; memgauge serve), unmeasured elsewhere
# the training loop's figures (docs/training.md), of the whole run: rates per second ("rate") and
# shares 0..1 ("share"); the only metrics that take a lower bound, ``samples_per_s>=400``
METRICS = {
    "rss": "bytes",
    "gpu": "bytes",
    "wall": "seconds",
    "cpu": "seconds",
    "disk": "bytes",
    "steps_per_s": "rate",
    "samples_per_s": "rate",
    "tokens_per_s": "rate",
    "mfu": "share",
    "data_wait": "share",
}
LOWER_BOUNDED = ("rate", "share")

_TOKEN = re.compile(r"[^\s,]+")


def format_amount(value: float, unit: str, *, signed: bool = False) -> str:
    """A figure of a limit for people: ``unit`` is a limit's unit (``"bytes"``, ``"seconds"``,
    ``"rate"`` or ``"share"``, ``Limit.unit``); ``signed`` puts a "+" before a figure above zero (a
    margin)."""
    if unit == "bytes":
        return format_bytes(value, signed=signed)
    if unit in LOWER_BOUNDED:
        text = f"{value:.4g}/s" if unit == "rate" else f"{value * 100:.4g}%"
        return "+" + text if signed and value > 0 else text
    if unit != "seconds":
        raise ValueError(f"unknown unit {unit!r}")
    text = format_seconds(value)
    return "+" + text if signed and value > 0 else text


class BudgetError(UsageError):
    """A budget that cannot be read. The message points at the bad token: its first line says what
    is wrong, the next two show the spec with a caret line under the token. ``token``, ``spec`` and
    ``start`` (the token's offset in ``spec``) are there for callers that show it otherwise."""

    def __init__(self, message: str, *, token: str = "", spec: str = "", start: int = 0) -> None:
        super().__init__(message)
        self.token = token
        self.spec = spec
        self.start = start


@dataclass(frozen=True)
class Limit:
    """One limit: ``value`` is bytes for rss, gpu and disk, seconds for wall and cpu. ``phase`` None
    limits the whole run. ``text`` is the token as written (or a description, for a baseline)."""

    metric: str
    value: float
    phase: str | None = None
    text: str = ""
    # a lower bound (``samples_per_s>=400``): the figure must be at least ``value``
    lower: bool = False

    @property
    def key(self) -> str:
        """``"fit.rss"`` for a phase limit, ``"rss"`` for the whole run: the identity a budget holds
        one limit of."""
        return self.metric if self.phase is None else f"{self.phase}.{self.metric}"

    @property
    def unit(self) -> str:
        """``"bytes"`` or ``"seconds"``."""
        return METRICS[self.metric]


@dataclass(frozen=True)
class Budget:
    """Limits, at most one per key, in the order written. ``policy`` names the policy it came from
    (None for limits given directly). An empty budget is falsy."""

    limits: tuple[Limit, ...] = ()
    policy: str | None = None

    def merged(self, other: Budget) -> Budget:
        """This budget with ``other`` over it: ``other``'s limits replace the limits of the same key
        (in place, so the order stays the order first written) and its new keys follow. ``policy``
        is ``other``'s when it has one."""
        theirs = {limit.key: limit for limit in other.limits}
        mine = {limit.key for limit in self.limits}
        limits = [theirs.get(limit.key, limit) for limit in self.limits]
        limits += [limit for limit in other.limits if limit.key not in mine]
        return Budget(tuple(limits), other.policy if other.policy is not None else self.policy)

    def get(self, key: str) -> Limit | None:
        """The limit of ``key`` (``"rss"``, ``"fit.wall"``), or None."""
        return next((limit for limit in self.limits if limit.key == key), None)

    def with_policy(self, policy: str | None) -> Budget:
        return replace(self, policy=policy)

    def __bool__(self) -> bool:
        return bool(self.limits)

    def __len__(self) -> int:
        return len(self.limits)

    def __iter__(self) -> Iterator[Limit]:
        return iter(self.limits)


def parse_budget(spec: str | Sequence[str], *, source: str = "--budget") -> Budget:
    """The limits of ``spec``: one string, or several (a repeated ``--budget``) read as one. The same
    key twice is an error, across strings too: a budget that says two things says nothing. Raises
    BudgetError (exit 64), whose message starts with ``source``, names the bad token and shows where
    it is."""
    specs = [spec] if isinstance(spec, str) else list(spec)
    limits: list[Limit] = []
    seen: dict[str, str] = {}
    for text in specs:
        for m in _TOKEN.finditer(text):
            token = m.group()
            fail = _failer(source, text, token, m.start())
            limit = _limit(token, fail)
            if limit.key in seen:
                raise fail(f"{limit.key} is given twice (first as '{seen[limit.key]}')")
            seen[limit.key] = token
            limits.append(limit)
    return Budget(tuple(limits))


def _failer(source: str, spec: str, token: str, start: int) -> Callable[[str], BudgetError]:
    def fail(reason: str) -> BudgetError:
        return BudgetError(_pointed(source, reason, spec, token, start), token=token, spec=spec, start=start)

    return fail


def _limit(token: str, fail: Callable[[str], BudgetError]) -> Limit:
    lower = ">=" in token
    key, eq, raw = token.partition(">=" if lower else "=")
    if not eq:
        if token.isalpha() and (_parses(parse_bytes, "1" + token) or _parses(parse_seconds, "1" + token)):
            # "rss=1.5 GiB": tokens end at spaces
            raise fail("a unit on its own (write a figure without spaces: rss=1.5GiB)")
        raise fail("missing '=' (a limit is metric=value, e.g. rss=512MiB)")
    phase, dot, metric = key.rpartition(".")
    metric = _metric(key, metric, dot, phase, fail)
    if not raw:
        raise fail("empty value")
    if METRICS[metric] in LOWER_BOUNDED:
        if dot:
            raise fail(f"{metric} is a figure of the run's training loop, not of a phase")
        return Limit(metric, _throughput(METRICS[metric], raw, fail), None, token, lower)
    if lower:
        raise fail(f"{metric} takes an upper limit ({metric}=value): only {', '.join(_lowered())} take '>='")
    return Limit(metric, _upper_value(key, metric, raw, fail), phase if dot else None, token)


def _metric(key: str, metric: str, dot: str, phase: str, fail: Callable[[str], BudgetError]) -> str:
    """A limit's metric, lower-cased and known, or the error that says what is wrong with it."""
    if not metric:
        raise fail(f"missing metric before '=' ({', '.join(METRICS)})")
    if dot and not phase:
        raise fail("empty phase name before '.'")
    if metric.lower() not in METRICS:
        raise fail(f"unknown metric '{key.rpartition('.')[2]}' (known: {', '.join(METRICS)})")
    return metric.lower()


def _upper_value(key: str, metric: str, raw: str, fail: Callable[[str], BudgetError]) -> float:
    """An upper limit's value: a size or a duration as the metric takes, above zero."""
    if METRICS[metric] == "bytes" and _parses(float, raw):
        # "rss=5" would be 5 bytes: almost surely a missing unit, and a limit that fails everything
        raise fail(f"{metric} takes a size with a unit, e.g. {key}={raw}MiB ({BYTE_UNITS_TEXT})")
    own, other = (parse_bytes, parse_seconds) if METRICS[metric] == "bytes" else (parse_seconds, parse_bytes)
    try:
        value = float(own(raw))
    except ValueError as e:
        reason = str(e)
        if reason.startswith("unknown unit") and _parses(other, raw):
            if METRICS[metric] == "bytes":
                raise fail(f"{metric} takes a size ({BYTE_UNITS_TEXT})") from None
            raise fail(f"{metric} takes a duration ({SECOND_UNITS_TEXT})") from None
        if reason == "negative":
            raise fail("negative limit (a limit must be above zero)") from None
        raise fail(reason) from None
    if value == 0:
        raise fail("zero limit (a limit must be above zero)")
    return value


def _lowered() -> list[str]:
    return [m for m, unit in METRICS.items() if unit in LOWER_BOUNDED]


def _throughput(unit: str, raw: str, fail: Callable[[str], BudgetError]) -> float:
    """A rate (``400`` or ``400/s``) or a share (``0.4`` or ``40%``), above zero."""
    import math

    text = raw.removesuffix("/s") if unit == "rate" else raw
    try:
        value = float(text.removesuffix("%")) / 100 if unit == "share" and text.endswith("%") else float(text)
    except ValueError:
        example = "400 or 400/s" if unit == "rate" else "0.4 or 40%"
        raise fail(f"not a {'rate' if unit == 'rate' else 'share'} (e.g. {example})") from None
    if not math.isfinite(value) or value <= 0:
        raise fail("a limit must be a finite figure above zero")
    if unit == "share" and value > 1:
        raise fail("a share is at most 1 (100%)")
    return value


def _parses(parser: Callable[[str], object], raw: str) -> bool:
    try:
        parser(raw)
    except ValueError:
        return False
    return True


def _pointed(source: str, reason: str, spec: str, token: str, start: int) -> str:
    """The message, then the spec's line holding the token with a caret line under it."""
    line_start = spec.rfind("\n", 0, start) + 1
    line_end = spec.find("\n", start)
    line = spec[line_start : line_end if line_end >= 0 else len(spec)]
    # one space for each tab or other blank, so that the caret line lines up in any terminal; the
    # indentation of a multi-line spec (a TOML string) is not shown
    shown = "".join(" " if c.isspace() else c for c in line).rstrip()
    indent = len(shown) - len(shown.lstrip())
    shown = shown[indent:]
    column = _width(shown[: start - line_start - indent])
    carets = "^" * max(1, _width(token))
    return f"{source}: {reason} in '{token}'\n  {shown}\n  {' ' * column}{carets}"


def _width(text: str) -> int:
    """Terminal columns of ``text``: East Asian wide characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
