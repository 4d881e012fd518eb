"""The verdict's records (:class:`Verdict`, :class:`CheckResult`, :class:`Blame`) and their one
serialised form, both ways.

``to_dict`` is what ``memgauge check --format json`` prints (with the one-line ``result`` that
``verdict_json`` adds), what the pytest plugin's ``--memgauge-json`` lists per limit and what the
service stores; ``from_dict`` reads it back into the same typed records, for whoever shows a stored
verdict (the service's pages). ``from_dict(to_dict(x)) == x``.

The numbers: a byte figure is an integer where it is whole (a median of two may be half a byte),
seconds are floats as measured (not rounded: the reader gets what the gate judged). A figure that
was not measured is null.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from memgauge._errors import ProfileFormatError
from memgauge.gate._budget import METRICS, Limit
from memgauge.model import VERDICT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

__all__ = ["FAIL", "PASS", "STATUSES", "UNMEASURED", "Blame", "CheckResult", "Verdict"]

PASS, FAIL, UNMEASURED = "pass", "fail", "unmeasured"
STATUSES = (PASS, FAIL, UNMEASURED)


@dataclass(frozen=True)
class Blame:
    """Where a breach came from. ``phase``: the innermost phase open at the peak (or the phase of a
    per-phase limit); ``file``/``line``/``function``/``source``: the line; ``bytes``: what that line
    held at the peak (memory limits); ``seconds``: its sampled time (time limits)."""

    phase: str | None = None
    pid: int | None = None
    file: str | None = None
    line: int | None = None
    function: str | None = None
    source: str | None = None
    bytes: int | None = None
    seconds: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Blame:
        """Raises ValueError when ``data`` is not what ``to_dict`` gives; a missing key is None."""
        where = "blame"
        _mapping(data, where)
        return cls(
            phase=_str_or_none(data, "phase", where),
            pid=_int_or_none(data, "pid", where),
            file=_str_or_none(data, "file", where),
            line=_int_or_none(data, "line", where),
            function=_str_or_none(data, "function", where),
            source=_str_or_none(data, "source", where),
            bytes=_int_or_none(data, "bytes", where),
            seconds=_float_or_none(data, "seconds", where),
        )


@dataclass(frozen=True)
class CheckResult:
    """One limit judged. ``measured`` is bytes or seconds, None when not measured; ``status`` is
    "pass", "fail" or "unmeasured"; ``baseline``: the baseline median a baseline limit was made
    from, None for a budget's limit; ``at_least``: ``measured`` is a lower bound, the enforced
    memory limit the run reached (the kernel kept usage from going past it)."""

    limit: Limit
    measured: float | None
    status: str
    blame: Blame | None = None
    note: str = ""
    baseline: float | None = None
    at_least: bool = False

    @property
    def margin(self) -> float | None:
        """``limit - measured`` (``measured - limit`` for a lower bound): the room left, negative
        when past it; None when not measured."""
        if self.measured is None:
            return None
        return self.measured - self.limit.value if self.limit.lower else self.limit.value - self.measured

    def to_dict(self) -> dict[str, Any]:
        unit = self.limit.unit
        # "lower" only where true: the verdicts of upper limits read as they always did
        lower = {"lower": True} if self.limit.lower else {}
        return {
            "key": self.limit.key,
            "metric": self.limit.metric,
            "phase": self.limit.phase,
            "unit": unit,
            "limit": _json_number(self.limit.value, unit),
            "text": self.limit.text,
            "measured": _json_number(self.measured, unit),
            "margin": _json_number(self.margin, unit),
            "status": self.status,
            "note": self.note,
            "baseline": _json_number(self.baseline, unit),
            "blame": None if self.blame is None else self.blame.to_dict(),
            "at_least": self.at_least,
            **lower,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckResult:
        """Raises ValueError when ``data`` is not what ``to_dict`` gives. ``key``, ``unit`` and
        ``margin`` are not read: they follow from the rest."""
        _mapping(data, "a result")
        key = data.get("key")
        where = f"the result of {key!r}" if isinstance(key, str) else "a result"
        metric = _str(data, "metric", where)
        if metric not in METRICS:
            raise ValueError(f"verdict JSON: {where}: unknown metric {metric!r}")
        status = _str(data, "status", where)
        if status not in STATUSES:
            raise ValueError(f"verdict JSON: {where}: unknown status {status!r}")
        limit = Limit(
            metric,
            _float(data, "limit", where),
            _str_or_none(data, "phase", where),
            _str(data, "text", where, default=""),
            _bool(data, "lower", where),
        )
        blame = data.get("blame")
        return cls(
            limit=limit,
            measured=_float_or_none(data, "measured", where),
            status=status,
            blame=None if blame is None else Blame.from_dict(blame),
            note=_str(data, "note", where, default=""),
            baseline=_float_or_none(data, "baseline", where),
            at_least=_bool(data, "at_least", where),
        )


@dataclass(frozen=True)
class Verdict:
    """The results, in the budget's order. ``program_failed``: the program (a run of it) exited
    non-zero or was killed; a run stopped by an enforced limit of the budget counts as that limit
    failed instead. ``program_status`` says how it ended ("exit 0", "exit 1", "killed by SIGKILL",
    "killed by the OOM killer", "stopped by memgauge: ..."). ``runs``: how many profiles were
    judged (medians when more than one). ``allow_unmeasured``: a limit that could not be
    measured (no GPU for a ``gpu`` limit, a phase that never ran) is accepted; without it such a
    verdict is not a pass: a gate that could not look does not say yes."""

    results: tuple[CheckResult, ...]
    program_failed: bool = False
    program_status: str = ""
    runs: int = 1
    baselines: int = 0
    allow_unmeasured: bool = False

    @property
    def ok(self) -> bool:
        """A pass: no limit failed, and every limit was measured (or ``allow_unmeasured``). A
        failed program is not a breach: ``program_failed`` says it."""
        return not self.failed and (self.allow_unmeasured or not self.unmeasured)

    @property
    def failed(self) -> tuple[CheckResult, ...]:
        return tuple(r for r in self.results if r.status == FAIL)

    @property
    def unmeasured(self) -> tuple[CheckResult, ...]:
        return tuple(r for r in self.results if r.status == UNMEASURED)

    @property
    def unjudged(self) -> bool:
        """No limit failed, yet one could not be measured and that was not allowed: neither a pass
        nor a fail (``memgauge check`` exits 3)."""
        return not self.failed and bool(self.unmeasured) and not self.allow_unmeasured

    def to_dict(self, *, result: str | None = None) -> dict[str, Any]:
        """Plain data for ``json.dumps(..., allow_nan=False)``, in the records' envelope (a
        ``memgauge-verdict``): bytes as integers where whole; ``result``, the one-line verdict, as
        the first field where given."""
        return VERDICT.wrap(
            {
                **({} if result is None else {"result": result}),
                "ok": self.ok,
                "program_failed": self.program_failed,
                "program_status": self.program_status,
                "runs": self.runs,
                "baselines": self.baselines,
                "limits": len(self.results),
                "failed": len(self.failed),
                "unmeasured": len(self.unmeasured),
                "allow_unmeasured": self.allow_unmeasured,
                "results": [r.to_dict() for r in self.results],
            }
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
        """The verdict ``to_dict`` (or ``verdict_json``) gave. The counts (``ok``, ``limits``,
        ``failed``, ``unmeasured``) and ``result`` are not read: they follow from the results.
        Raises ValueError when ``data`` is not such a verdict."""
        where = "verdict"
        _mapping(data, where)
        try:  # every version so far has the same fields; the header is checked, then dropped
            data = VERDICT.open(data)[1]
        except ProfileFormatError as e:
            raise ValueError(f"verdict JSON: {e.message}") from None
        results = _required(data, "results", where)
        if not isinstance(results, list):
            raise _wrong(where, "results", "a list")
        failed = data.get("program_failed", False)
        if not isinstance(failed, bool):
            raise _wrong(where, "program_failed", "true or false")
        return cls(
            results=tuple(CheckResult.from_dict(r) for r in results),
            program_failed=failed,
            program_status=_str(data, "program_status", where, default=""),
            runs=_int(data, "runs", where, default=1),
            baselines=_int(data, "baselines", where, default=0),
            allow_unmeasured=_bool(data, "allow_unmeasured", where),
        )


def _json_number(value: float | None, unit: str) -> int | float | None:
    """A figure as the JSON holds it: bytes as an integer where whole, anything else a float."""
    if value is None:
        return None
    if unit == "bytes" and float(value).is_integer():
        return int(value)
    return float(value)


# --- reading -------------------------------------------------------------------------------------
# A missing key reads as its field's default (None for the optional ones); a value of the wrong
# type is a ValueError that names where it is, never a record holding something else than it says.


def _mapping(data: object, where: str) -> None:
    if not isinstance(data, dict):
        raise ValueError(f"verdict JSON: {where} is not an object")


def _wrong(where: str, key: str, what: str) -> ValueError:
    return ValueError(f"verdict JSON: {where}: {key!r} is not {what}")


def _required(data: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in data:
        raise ValueError(f"verdict JSON: {where}: no {key!r}")
    return data[key]


def _str(data: Mapping[str, Any], key: str, where: str, default: str | None = None) -> str:
    value = data.get(key, default) if default is not None else _required(data, key, where)
    if not isinstance(value, str):
        raise _wrong(where, key, "a string")
    return value


def _str_or_none(data: Mapping[str, Any], key: str, where: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise _wrong(where, key, "a string")
    return value


def _bool(data: Mapping[str, Any], key: str, where: str) -> bool:
    # absent in verdicts stored before the key existed: false, what they meant
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise _wrong(where, key, "true or false")
    return value


def _is_int(value: object) -> bool:
    # JSON's true and false are Python ints: not figures
    return isinstance(value, int) and not isinstance(value, bool)


def _int(data: Mapping[str, Any], key: str, where: str, default: int) -> int:
    value = data.get(key, default)
    if not _is_int(value):
        raise _wrong(where, key, "a whole number")
    return int(value)


def _int_or_none(data: Mapping[str, Any], key: str, where: str) -> int | None:
    value = data.get(key)
    if value is not None and not _is_int(value):
        raise _wrong(where, key, "a whole number")
    return value


def _float(data: Mapping[str, Any], key: str, where: str) -> float:
    _required(data, key, where)
    value = _float_or_none(data, key, where)
    if value is None:
        raise _wrong(where, key, "a number")
    return value


def _float_or_none(data: Mapping[str, Any], key: str, where: str) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if not (_is_int(value) or isinstance(value, float)):
        raise _wrong(where, key, "a number")
    return float(value)
