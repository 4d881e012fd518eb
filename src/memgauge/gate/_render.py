"""A verdict's one line and its JSON, and profiles as Bencher Metric Format (BMF) JSON for
benchmark dashboards. The verdict's table, in the terminal and in Markdown, is the report
document's (``memgauge.render``'s verdict renderers), which uses ``result_line`` as its last line.

BMF (https://bencher.dev/docs/reference/bencher-metric-format/) maps benchmark names to measures,
each ``{"value": ..., "lower_value": ..., "upper_value": ...}`` (the bounds optional). A measure is
named by its slug or name, at most 64 characters; an unknown one is created on first upload, so
the names carry their units: ``peak-rss-bytes``, ``wall-seconds``, ``cpu-seconds``, and per phase
``<phase>.peak-rss-bytes`` and ``<phase>.wall-seconds`` (CPU time is not recorded per phase).
"""

from __future__ import annotations

from memgauge.gate._records import Verdict
from memgauge.gate._verdict import measure, phase_names
from memgauge.model import Profile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

__all__ = ["bencher_bmf", "result_line", "verdict_json"]

_MEASURE_MAX = 64  # Bencher's limit on a measure's name


def result_line(verdict: Verdict) -> str:
    """One line: "within budget", "OVER BUDGET: 2 of 5 limits", "the program failed (exit 1)",
    "NOT JUDGED: 1 of 2 limits could not be measured; ..."."""
    failed, total = len(verdict.failed), len(verdict.results)
    unmeasured = len(verdict.unmeasured)
    extra = []
    if verdict.runs > 1:
        extra.append(f"medians of {verdict.runs} runs")
    if unmeasured:
        extra.append(f"{unmeasured} not measured" + (", allowed" if verdict.allow_unmeasured else ""))
    suffix = f" ({', '.join(extra)})" if extra else ""
    if failed:
        line = f"OVER BUDGET: {failed} of {total} limit{'s' if total != 1 else ''}{suffix}"
        return line + (
            f"; the program failed too ({verdict.program_status})" if verdict.program_failed else ""
        )
    if verdict.program_failed:
        return f"the program failed ({verdict.program_status}){suffix}"
    if verdict.unjudged:
        runs = f" (medians of {verdict.runs} runs)" if verdict.runs > 1 else ""
        return (
            f"NOT JUDGED: {unmeasured} of {total} limit{'s' if total != 1 else ''} could not be "
            f"measured{runs}; --allow-unmeasured accepts that"
        )
    return f"within budget{suffix}" if total else f"no limits to check{suffix}"


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    """The verdict as plain data (``Verdict.to_dict``) with the one-line ``result`` first after the
    envelope's header: what ``memgauge check --format json`` prints and the service stores.
    ``Verdict.from_dict`` reads it back."""
    return verdict.to_dict(result=result_line(verdict))


def bencher_bmf(
    profiles: Mapping[str, Profile | Sequence[Profile]],
) -> dict[str, dict[str, dict[str, float]]]:
    """Bencher Metric Format: for each benchmark name, its peak, wall and CPU time, and each phase's
    peak and duration. Several profiles under one name (``--repeat``) give the median as ``value``
    and the min and max as ``lower_value`` and ``upper_value``; a phase counts the runs it ran in."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name, item in profiles.items():
        runs = [item] if isinstance(item, Profile) else list(item)
        if not runs:
            raise ValueError(f"no profile for the benchmark {name!r}")
        measures: dict[str, dict[str, float]] = {}
        whole = [
            ("peak-rss-bytes", "rss", None),
            ("wall-seconds", "wall", None),
            ("cpu-seconds", "cpu", None),
        ]
        phased = [
            (_measure_name(phase, suffix), metric, phase)
            for phase in phase_names(runs)
            for suffix, metric in (("peak-rss-bytes", "rss"), ("wall-seconds", "wall"))
        ]
        for measure_name, metric, phase in whole + phased:
            values = [v for v, _ in (measure(run, metric, phase) for run in runs) if v is not None]
            if values:
                measures[measure_name] = _bmf_values(values)
        out[name] = measures
    return out


def _bmf_values(values: list[float]) -> dict[str, float]:
    import statistics

    entry = {"value": float(statistics.median(values))}
    if len(values) > 1:
        entry["lower_value"] = float(min(values))
        entry["upper_value"] = float(max(values))
    return entry


def _measure_name(phase: str, suffix: str) -> str:
    """``<phase>.<suffix>`` within Bencher's 64 characters: a long phase name is cut and given a
    short hash, so that two long names stay two measures."""
    name = f"{phase}.{suffix}"
    if len(name) <= _MEASURE_MAX:
        return name
    import hashlib

    digest = hashlib.sha1(phase.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    keep = _MEASURE_MAX - len(suffix) - len(digest) - 2
    return f"{phase[:keep]}~{digest}.{suffix}"
