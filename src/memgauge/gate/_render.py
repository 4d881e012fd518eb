"""Verdicts as text (a plain table: CI logs are not terminals), as JSON, and profiles as Bencher
Metric Format (BMF) JSON for benchmark dashboards.

BMF (https://bencher.dev/docs/reference/bencher-metric-format/) maps benchmark names to measures,
each ``{"value": ..., "lower_value": ..., "upper_value": ...}`` (the bounds optional). A measure is
named by its slug or name, at most 64 characters; an unknown one is created on first upload, so
the names carry their units: ``peak-rss-bytes``, ``wall-seconds``, ``cpu-seconds``, and per phase
``<phase>.peak-rss-bytes`` and ``<phase>.wall-seconds`` (CPU time is not recorded per phase).
"""

from __future__ import annotations

from memgauge.gate._budget import format_amount
from memgauge.gate._records import FAIL, PASS, UNMEASURED, CheckResult, Verdict
from memgauge.gate._verdict import measure, phase_names
from memgauge.model import Profile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

__all__ = ["bencher_bmf", "result_line", "verdict_json", "verdict_text"]

_HEADER = ("limit", "budget", "measured", "margin", "status")
_STATUS = {PASS: "pass", FAIL: "FAIL", UNMEASURED: "unmeasured"}
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


def verdict_text(verdict: Verdict, *, width: int = 100, cwd: str | None = None) -> str:
    """A table of the limits (limit, budget, measured, margin, status and note), each breach
    followed by the phase and the line responsible, then :func:`result_line`. Lines longer than
    ``width`` are cut (a note moves to a line of its own first). Strings from the profile (paths,
    source lines) are shown with control characters escaped: they are the program's, not ours."""
    rows = [_HEADER] + [_row(r) for r in verdict.results]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_HEADER) - 1)]
    out: list[str] = []
    for i, row in enumerate(rows):
        line = "  ".join(
            [*(cell.ljust(w) for cell, w in zip(row[:-1], widths, strict=True)), row[-1]]
        ).rstrip()
        result = verdict.results[i - 1] if i else None
        note = _note(result) if result is not None else ""
        if note and len(line) + 2 + len(note) <= width:
            out.append(f"{line}  {note}")
        else:
            out.append(_cut(line, width))
            if note:
                out.append(_cut(f"    {note}", width))
        if result is not None and result.status == FAIL and result.blame is not None:
            blame = _blame_text(result, cwd)
            if blame:
                out.append(_cut(f"    at {blame}", width))
    out.append(result_line(verdict))
    return "\n".join(out) + "\n"


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


# --- the table ----------------------------------------------------------------------------------


def _row(r: CheckResult) -> tuple[str, str, str, str, str]:
    unit = r.limit.unit
    measured = "—" if r.measured is None else format_amount(r.measured, unit)
    margin = "—" if r.margin is None else format_amount(r.margin, unit, signed=True)
    if r.at_least and r.measured is not None:
        # the run reached an enforced limit: its true figure is at least that, its room at most
        measured, margin = f"≥ {measured}", f"≤ {margin}"
    limit = ("≥ " if r.limit.lower else "") + format_amount(r.limit.value, unit)
    return (_plain(r.limit.key), limit, measured, margin, _STATUS[r.status])


def _note(r: CheckResult) -> str:
    notes = []
    if r.baseline is not None:
        # "baseline 412 MiB + 10% (+7.3%)": the allowance, and where the run stands against it
        allowance = r.limit.text.partition(" <= ")[2] or f"baseline {format_amount(r.baseline, r.limit.unit)}"
        change = (
            f" ({(r.measured / r.baseline - 1) * 100:+.1f}%)" if r.measured is not None and r.baseline else ""
        )
        notes.append(allowance + change)
    if r.note:
        notes.append(_plain(r.note))
    return " · ".join(notes)


def _blame_text(r: CheckResult, cwd: str | None) -> str:
    from memgauge.analysis import short_path

    b = r.blame
    assert b is not None
    parts = []
    if b.phase is not None:
        parts.append(f"phase '{_plain(b.phase)}'")
    if b.pid is not None:
        parts.append(f"pid {b.pid}")
    if b.file is not None:
        where = f"{_plain(short_path(b.file, cwd))}:{b.line}" if b.line else _plain(short_path(b.file, cwd))
        if b.function:
            where += f" in {_plain(b.function)}"
        parts.append(where)
    if b.bytes is not None:
        parts.append(f"{format_amount(b.bytes, 'bytes')} at the peak")
    if b.seconds is not None:
        parts.append(f"{format_amount(b.seconds, 'seconds')} sampled")
    if b.source:
        parts.append(_plain(b.source.strip()))
    return " · ".join(parts)


def _plain(text: str) -> str:
    """``text`` with control characters escaped: a source line or path from the profile must not
    move the cursor or colour a CI log."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _cut(line: str, width: int) -> str:
    return line if len(line) <= width else line[: max(1, width - 1)] + "…"
