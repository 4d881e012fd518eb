"""Verdicts: a profile (or the medians of several) judged against a budget or against baselines.

What each limit measures:

- ``rss``: what a container needs for the whole process tree (``profile.peak.needs_bytes``;
  profiles written before it: the tree's resident peak, ``profile.peak.resident_bytes``);
  ``phase.rss``: the highest resident peak among the records of that phase name, in any process
  (a lower bound, said in the note, when a record's peak is not exact);
- ``wall``: the run's wall time; ``phase.wall``: the summed duration of that name's records, as the
  report's phase table sums them;
- ``cpu``: user + system time of the tree; per phase it is not recorded: unmeasured;
- ``gpu``: the largest process figure on one device (NVML, with torch's reserved bytes named
  beside it; torch's reserved alone, a lower bound, where NVML was missing: ``analysis.gpu_budget_figure``);
  ``phase.gpu``: torch's reserved peak inside that phase's windows (exact per window; a lower
  bound, no CUDA context: ``analysis.gpu_phase_figure``); unmeasured where no window of it exists;
- ``disk``: the most a sandboxed run's files held on its scratch space (``environment.sandbox.disk``,
  memgauge serve); unmeasured elsewhere, and per phase.

An unmeasured limit (the phase never ran, no GPU figure) never fails; its note says why. Nor does
it pass: the verdict is not ``ok`` (``memgauge check`` exits 3) unless ``allow_unmeasured``. A limit is
inclusive: measuring exactly the limit passes, except under a memory limit the kernel enforced
(``_ceiling``): a run that reached it, or had any process of its tree OOM-killed, measured "at
least the limit" and fails a whole-run rss limit at or below it.

Blame, for a failed limit, is what to look at first:

- whole-run ``rss``: the largest entry of ``peak.attribution`` that is a real line (pseudo-lines
  such as ``<startup>`` or ``<inherited>`` only when there is no real one: a budget is fixed in the
  program's code), and the innermost phase open at the peak's moment, in that line's process when
  one of its phases was open then (else in any process);
- ``phase.rss``: that phase (the pid of its highest record), and the line as above only when the
  peak's moment lies inside one of that phase's records in the line's process (else the tree's
  peak tells nothing about the phase);
- whole-run ``wall`` / ``cpu``: the phase with the most time of its own (its records' durations
  less the phases nested in them: an enclosing ``main`` phase would always be the longest), and
  the line with the most sampled time (all of it for wall, CPU only for cpu), a line of the
  program's own code when there is one;
- ``phase.wall``: that phase (the pid of its longest record); lines are not recorded per phase.

With several runs (``judge_runs``, ``judge_baseline``) each limit judges the median, and blame comes
from the run whose figure for that limit is the median (the lower of the two middle ones for an
even count): the run that stands for the figure shown.
"""

from __future__ import annotations

from memgauge.gate._budget import METRICS, Budget, Limit, format_amount
from memgauge.gate._ceiling import Ceiling, ceiling
from memgauge.gate._records import FAIL, PASS, UNMEASURED, Blame, CheckResult, Verdict
from memgauge.model import Attribution, PhaseRecord, Profile
from memgauge.sections import SECTIONS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

__all__ = ["judge", "judge_baseline", "judge_runs", "measure", "phase_names"]

NO_DISK_NOTE = "disk use is measured for a whole sandboxed run only (memgauge serve)"
PHASE_CPU_NOTE = "CPU time is not recorded per phase"
LOWER_BOUND_NOTE = "a lower bound: the phase's peak is not exact"


# --- measuring ---------------------------------------------------------------------------------


def measure(profile: Profile, metric: str, phase: str | None = None) -> tuple[float | None, str]:
    """The figure a ``metric`` limit judges in ``profile`` (of ``phase``, None for the whole run),
    and a note: why it is None, or what to know about it ("" when nothing)."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}")
    section = _budget_part(metric)
    if section is not None:
        figure: tuple[float | None, str] = section.figure(profile, metric, phase)
        return figure
    if metric == "disk":
        disk = (profile.environment.get("sandbox") or {}).get("disk") or {}
        if phase is not None or not isinstance(disk.get("peak_bytes"), int):
            return None, NO_DISK_NOTE
        return float(disk["peak_bytes"]), ""
    if phase is None:
        if metric == "rss":
            return float(rss_figure(profile)), ""
        if metric == "wall":
            return profile.wall_seconds, ""
        return profile.cpu.user_seconds + profile.cpu.system_seconds, ""
    return _phase_figure(profile, metric, phase)


def _budget_part(metric: str) -> Any:
    """The budget part of the section that owns ``metric`` (its figure, and its results after
    judging: the registry's "budget"), None for the core's own metrics."""
    for spec in SECTIONS:
        part = spec.part("budget")
        if part is not None and metric in part.METRICS:
            return part
    return None


def _phase_figure(profile: Profile, metric: str, phase: str) -> tuple[float | None, str]:
    """``measure`` for a phase's rss, wall or cpu limit."""
    from memgauge.analysis import phase_totals

    total = next((t for t in phase_totals(profile) if t.name == phase), None)
    if total is None:
        return None, f"phase '{phase}' did not run"
    if metric == "cpu":
        return None, PHASE_CPU_NOTE
    if metric == "rss":
        return float(total.peak_bytes), LOWER_BOUND_NOTE if total.lower_bound else ""
    return total.seconds, ""


def rss_figure(profile: Profile) -> int:
    """The figure a whole-run ``rss`` limit judges: what a container needs (``peak.needs_bytes``),
    else (a profile written before it) the tree's resident peak."""
    return profile.peak.headline_bytes


# --- judging -----------------------------------------------------------------------------------


def judge(profile: Profile, budget: Budget, *, allow_unmeasured: bool = False) -> Verdict:
    """``profile`` against ``budget``: one result per limit, in the budget's order."""
    return judge_runs([profile], budget, allow_unmeasured=allow_unmeasured)


def judge_runs(runs: Sequence[Profile], budget: Budget, *, allow_unmeasured: bool = False) -> Verdict:
    """Several runs of one program against ``budget``: each limit judges the median of the runs'
    figures (over the runs where it was measured: a phase may not run every time). A run stopped
    by an enforced limit fails that limit whatever the median, since its figures stop at the
    limit."""
    if not runs:
        raise ValueError("judge_runs needs at least one profile")
    results = []
    stops = [(i, _stopped_metric(run)) for i, run in enumerate(runs)]
    ceilings = [(i, c) for i, run in enumerate(runs) if (c := ceiling(run)) is not None]
    for limit in budget.limits:
        result = _judge_limit(runs, limit)
        stopped = [i for i, metric in stops if metric == limit.metric and limit.phase is None]
        if stopped:
            i = stopped[0]
            note = f"stopped by --enforce{_where(i, runs)}: {runs[i].exit.stopped_by}"
            result = CheckResult(
                limit, result.measured, FAIL, _blame(runs[i], limit), _join(note, result.note)
            )
        if limit.metric == "rss" and limit.phase is None and ceilings:
            result = _at_the_ceiling(result, runs, ceilings)
        section = _budget_part(limit.metric)
        if section is not None:
            result = section.judged(result, runs)
        results.append(result)
    failed, status = _program_status(runs, budget)
    return Verdict(tuple(results), failed, status, runs=len(runs), allow_unmeasured=allow_unmeasured)


def _at_the_ceiling(
    result: CheckResult, runs: Sequence[Profile], ceilings: list[tuple[int, Ceiling]]
) -> CheckResult:
    """A whole-run rss result when a run reached the memory limit the kernel enforced: its figure
    is at least that limit. At or above the budget's limit, that is over budget (an OOM kill of
    any process in the tree included); a ceiling below the budget's limit leaves the budget
    unjudged: the run shows only that the program needs more than the ceiling."""
    from memgauge._units import format_bytes

    limit = result.limit
    i, top = max(ceilings, key=lambda ic: ic[1].limit_bytes)
    measured = max(result.measured or 0.0, float(top.limit_bytes))
    # the figure the table shows ("≥ 163 MiB"): the note says the same one, never the limit below it
    least = format_bytes(int(measured))
    # the kernel's counter can stop a charge batch short of the limit
    if top.limit_bytes >= limit.value - runs[i].peak.error_bound_bytes:
        note = f"{top.text()}{_where(i, runs)}: at least {least}"
        blame = result.blame or _blame(runs[i], limit)
        # the median's note that it lies within the counter's error bound of the limit says
        # nothing now; "stopped by --enforce" still does
        kept = [n for n in result.note.split("; ") if n and not n.startswith("within the peak's error bound")]
        return CheckResult(limit, measured, FAIL, blame, _join(*kept, note), result.baseline, True)
    note = f"{top.text()}{_where(i, runs)}, below the budget: at least {least}, not judged against the budget"
    return CheckResult(limit, measured, UNMEASURED, None, _join(note, result.note), result.baseline, True)


def _where(i: int, runs: Sequence[Profile]) -> str:
    return f" (run {i + 1} of {len(runs)})" if len(runs) > 1 else ""


def judge_baseline(
    runs: Sequence[Profile],
    baselines: Sequence[Profile],
    *,
    max_memory_increase: float | None,
    max_time_increase: float | None,
) -> Verdict:
    """The medians of ``runs`` against the medians of ``baselines``: rss, wall and cpu of the whole
    run, then rss and wall of each phase name both sides ran (in first-start order of the runs).
    A limit is ``baseline median * (1 + tolerance)``; memory limits take ``max_memory_increase``,
    time limits ``max_time_increase``, and a tolerance of None leaves that kind out."""
    from fractions import Fraction

    if not runs or not baselines:
        raise ValueError("judge_baseline needs at least one run and one baseline")
    if any(t is not None and t < 0 for t in (max_memory_increase, max_time_increase)):
        raise ValueError("a tolerance cannot be negative")
    keys: list[tuple[str, str | None]] = [("rss", None), ("wall", None), ("cpu", None)]
    for name in phase_names(runs):
        if any(p.name == name for b in baselines for p in b.phases):
            keys += [("rss", name), ("wall", name)]
    results = []
    for metric, phase in keys:
        tolerance = max_memory_increase if METRICS[metric] == "bytes" else max_time_increase
        if tolerance is None:
            continue
        base = _median([v for v, _ in (measure(b, metric, phase) for b in baselines) if v is not None])
        if base is None:
            continue
        key = metric if phase is None else f"{phase}.{metric}"
        # exact arithmetic: 400 MiB + 25% is 500 MiB, not 500 MiB and a rounding error to fail on
        value = float(Fraction(base) * (1 + Fraction(repr(tolerance))))
        text = f"{key} <= baseline {format_amount(base, METRICS[metric])} + {_percent(tolerance)}"
        results.append(_judge_limit(runs, Limit(metric, value, phase, text), baseline=base))
    failed, status = _program_status(runs, Budget())
    return Verdict(tuple(results), failed, status, runs=len(runs), baselines=len(baselines))


def _judge_limit(runs: Sequence[Profile], limit: Limit, *, baseline: float | None = None) -> CheckResult:
    figures = [(measure(run, limit.metric, limit.phase), i) for i, run in enumerate(runs)]
    measured = sorted((value, i) for (value, _), i in figures if value is not None)
    if not measured:
        return CheckResult(limit, None, UNMEASURED, note=figures[0][0][1], baseline=baseline)
    median = _median([value for value, _ in measured])
    assert median is not None
    # the run that stands for the median: the lower middle one for an even count
    middle = measured[(len(measured) - 1) // 2][1]
    notes = [figures[middle][0][1], _error_bound_note(runs[middle], limit, median)]
    if limit.phase is not None and len(measured) < len(runs):
        notes.append(f"phase '{limit.phase}' ran in {len(measured)} of {len(runs)} runs")
    status = FAIL if (median < limit.value if limit.lower else median > limit.value) else PASS
    blame = _blame(runs[middle], limit) if status == FAIL else None
    return CheckResult(limit, median, status, blame, _join(*notes), baseline)


def _error_bound_note(run: Profile, limit: Limit, measured: float) -> str:
    """A note when the whole-run peak is nearer the limit than its error bound: the verdict goes by
    the figure measured, but the true peak may lie on the other side (above the figure for the
    sampled methods, below it for the cgroup ones; see docs/measurement.md)."""
    # error_bound_bytes bounds the resident peak, not the need (a sampled working set), unless the
    # need is that peak (in-process)
    own = not run.peak.needs_bytes or run.peak.needs_method.endswith("(in-process)")
    bound = run.peak.error_bound_bytes if own else 0
    if limit.metric != "rss" or limit.phase is not None or bound <= 0 or abs(limit.value - measured) > bound:
        return ""
    from memgauge._units import format_bytes

    return f"within the peak's error bound ({format_bytes(bound)}, {run.peak.method or 'unknown method'})"


def _program_status(runs: Sequence[Profile], budget: Budget) -> tuple[bool, str]:
    """Whether the program failed, and how the runs ended: the first bad end, else the first run's.
    A run stopped by an enforced limit that ``budget`` holds is a breach (that limit fails), not a
    failure of the program; stopped by a limit the budget does not hold, it is one."""
    from memgauge.analysis import exit_text

    enforced = {limit.metric for limit in budget.limits if limit.phase is None}
    rss = min(
        (limit.value for limit in budget.limits if limit.metric == "rss" and limit.phase is None),
        default=None,
    )
    bad: list[tuple[bool, str]] = []
    for i, run in enumerate(runs):
        text, tone = exit_text(run)
        top = ceiling(run)
        if tone == "bad":
            bad.append((_stopped_metric(run) not in enforced, text + _where(i, runs)))
        elif top is not None and top.oom_kills:
            # the main process ended well but a process of its tree was OOM-killed at the limit:
            # a breach of an rss limit the ceiling stands for, else a run that did not work
            breach = rss is not None and top.limit_bytes >= rss - run.peak.error_bound_bytes
            bad.append((not breach, f"{text}; {top.text()}{_where(i, runs)}"))
    failures = [text for failed, text in bad if failed]
    if failures:
        return True, failures[0]
    return False, bad[0][1] if bad else exit_text(runs[0])[0]


def _stopped_metric(run: Profile) -> str | None:
    """The metric of the enforced limit that stopped ``run`` (its ``exit.stopped_by`` starts
    "rss ...", "wall time ..." or "CPU time ..."), None when it was not stopped."""
    reason = (run.exit.stopped_by or "").lower()
    return next((m for m in ("rss", "wall", "cpu") if reason.startswith(m)), None)


def _median(values: list[float]) -> float | None:
    # statistics is imported on first use: it imports random, hashlib and more
    import statistics

    return statistics.median(values) if values else None


def phase_names(runs: Sequence[Profile]) -> list[str]:
    """The phase names of ``runs``, each once, in the order they first started."""
    names: dict[str, None] = {}
    for run in runs:
        for p in sorted(run.phases, key=lambda p: p.start_seconds):
            names.setdefault(p.name)
    return list(names)


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def _percent(fraction: float) -> str:
    return f"{fraction * 100:.4g}%"


# --- blame -------------------------------------------------------------------------------------


def _blame(profile: Profile, limit: Limit) -> Blame | None:
    if limit.metric == "rss":
        return _memory_blame(profile, limit.phase)
    if limit.metric in ("wall", "cpu"):
        return _time_blame(profile, limit.metric, limit.phase)
    return None


def _memory_blame(profile: Profile, phase: str | None) -> Blame:
    at = profile.peak.at_seconds
    entries = _real_first(profile.peak.attribution)
    if phase is None:
        entry = entries[0] if entries else None
        pid = entry.pid if entry is not None else None
        inner = _innermost(profile.phases, at, pid)
        if inner is None and pid is not None:
            inner = _innermost(profile.phases, at, None)
        return _line_blame(entry, inner.name if inner else None, pid if pid is not None else _pid(inner))
    records = [p for p in profile.phases if p.name == phase]
    highest = max(records, key=lambda p: p.peak_resident_bytes, default=None)
    open_in = {p.pid for p in records if _contains(p, at)}
    entry = next((e for e in entries if e.pid in open_in), None)
    return _line_blame(entry, phase, entry.pid if entry is not None else _pid(highest))


def _line_blame(entry: Attribution | None, phase: str | None, pid: int | None) -> Blame:
    if entry is None:
        return Blame(phase=phase, pid=pid)
    return Blame(phase, pid, entry.file, entry.line, entry.function, entry.source, entry.bytes)


def _time_blame(profile: Profile, metric: str, phase: str | None) -> Blame:
    if phase is not None:
        records = [p for p in profile.phases if p.name == phase]
        longest = max(records, key=lambda p: p.duration_seconds, default=None)
        return Blame(phase=phase, pid=_pid(longest))
    from memgauge.analysis import top_lines

    by = "time" if metric == "wall" else "cpu"
    rows = top_lines(profile, 1, by=by, user_only=True) or top_lines(profile, 1, by=by)
    own = _most_own_time(profile.phases)
    if not rows:
        return Blame(phase=own)
    s = rows[0].stats
    seconds = rows[0].total_seconds if by == "time" else s.cpu_python_seconds + s.cpu_native_seconds
    return Blame(own, s.pid, s.file, s.line, s.function, s.source, seconds=seconds)


def _real_first(entries: list[Attribution]) -> list[Attribution]:
    """Largest first, real lines before pseudo-lines (``<startup>``, ``<inherited>``, ...)."""
    return sorted(entries, key=lambda e: (e.file.startswith("<"), -e.bytes))


def _contains(p: PhaseRecord, at: float | None) -> bool:
    return at is not None and p.start_seconds <= at <= p.end_seconds


def _innermost(phases: list[PhaseRecord], at: float | None, pid: int | None) -> PhaseRecord | None:
    """The deepest phase open at ``at`` (in process ``pid``, any when None); the latest to start
    among equals."""
    open_ = [p for p in phases if _contains(p, at) and (pid is None or p.pid == pid)]
    return max(open_, key=lambda p: (p.depth, p.start_seconds), default=None)


def _pid(record: PhaseRecord | None) -> int | None:
    return None if record is None else record.pid


def _most_own_time(phases: list[PhaseRecord]) -> str | None:
    """The phase name with the most time of its own: its records' durations less those of the
    records nested directly in them."""
    own = [max(0.0, p.duration_seconds) for p in phases]
    for p in phases:
        if p.parent is not None and 0 <= p.parent < len(phases):
            own[p.parent] -= max(0.0, p.duration_seconds)
    totals: dict[str, float] = {}
    for p, seconds in zip(phases, own, strict=True):
        totals[p.name] = totals.get(p.name, 0.0) + max(0.0, seconds)
    return max(totals, key=lambda name: totals[name], default=None)
