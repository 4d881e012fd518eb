"""Running ``memgauge fit``: each trial of the search (``_fit``) a fresh ``memgauge run`` through a
sweep job, then the answer verified by a run under the budget as a hard memory limit, caches
cold (``runner.prove_limit``).

A margin makes the search aim below the budget (``rss=1GiB`` with a 10% margin searches for
runs within 0.9 GiB); the verification holds the answer to the budget itself.
"""

from __future__ import annotations

import contextlib
import os
import signal
import statistics
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from memgauge._errors import MemgaugeError, UsageError
from memgauge.model import FitRecord, FitTrial, FitVerification, Profile
from memgauge.sweep._fit import search
from memgauge.sweep._fit_knobs import check_reached, program_value
from memgauge.sweep._job import Job, JobResult, execute_job
from memgauge.sweep._sweep import SweepPlan


class MeasurementError(MemgaugeError):
    """A trial memgauge could not measure (exit 70, as memgauge's own failure)."""


# what each limit of a fit measures: its unit, and how it reads from a run's profile
FIT_METRICS = {"rss": "bytes", "gpu": "bytes", "wall": "seconds", "step": "seconds"}


@dataclass
class FitPlan:
    """``target``: the script (``["prog.py"]``) or module (``["-m", "mod"]``); ``args``: its
    arguments (``{NAME}`` replaced by the value tried); ``limits``: the budget, metric (a key of
    ``FIT_METRICS``) to bytes or seconds; ``margin``: the fraction of each limit the search keeps
    free; ``low``/``high``/``start``: the range searched and the first value tried (``start``
    None: the program's own value where it can be read, else ``low``); ``tolerance``: the search
    ends once the smallest value over the budget is at most this fraction above the answer."""

    target: list[str]
    parameter: str
    limits: dict[str, float]
    args: list[str] = field(default_factory=list)
    templates: list[str] = field(default_factory=list)
    margin: float = 0.0
    tolerance: float = 0.03
    low: int = 1
    high: int | None = None
    start: int | None = None
    timeout_seconds: float | None = None
    verify: bool = True
    cwd: str | None = None

    def aims(self) -> dict[str, float]:
        """The limits the search holds the trials to: each budget limit less the margin."""
        return {m: v * (1 - self.margin) for m, v in self.limits.items()}

    def sweep_plan(self) -> SweepPlan:
        return SweepPlan(
            target=list(self.target),
            params={self.parameter: [self.low]},
            args=list(self.args),
            templates=list(self.templates),
            # line sampling adds memory of its own, and the verifying run has none
            run_options=["--no-lines"],
            timeout_seconds=self.timeout_seconds,
            cwd=self.cwd or os.getcwd(),
        )


def figures_of(profile: Profile) -> dict[str, float]:
    """The figure of each fit metric that ``profile`` measured: ``rss`` what a container needs, as
    ``memgauge check`` judges it (``Peak.headline_bytes``), ``gpu`` the largest device's
    process use (the allocator's reserve where the process's is unknown), ``step`` the median
    time of the training steps."""
    out: dict[str, float] = {"rss": float(profile.peak.headline_bytes), "wall": profile.wall_seconds}
    gpu = [d.process_peak or d.reserved_peak for d in profile.gpu]
    known = [g for g in gpu if g is not None]
    if known:
        out["gpu"] = float(max(known))
    torch = profile.torch
    if torch is not None and torch.steps:
        out["step"] = statistics.median(s.seconds for s in torch.steps)
    return out


def fit(plan: FitPlan, progress: Callable[[FitTrial], None] | None = None) -> FitRecord:
    """Search, then verify the answer (``plan.verify``)."""
    sweep = plan.sweep_plan()
    aims = plan.aims()

    def measure(value: int, guided: bool) -> FitTrial:
        job = sweep.job({plan.parameter: value}, f"fit-{plan.parameter}-{value}")
        result = _run_job(job)
        if result.profile is None:
            # memgauge could not measure it: no figure says whether the value fits
            raise MeasurementError(f"the run at {plan.parameter}={value} was not measured: {result.error}")
        if result.error is None and result.exit_code == 0:
            # never reached the program: refused after the first run, not after ten (a run that
            # failed or was stopped may not have got to reading it)
            check_reached(result.profile, [plan.parameter])
        t = _trial(value, guided, result.profile, result.error, result.exit_code, result.seconds, aims)
        if progress is not None:
            progress(t)
        return t

    start, start_from = first_value(plan)
    found = search(measure, aims, low=plan.low, high=plan.high, start=start, tolerance=plan.tolerance)
    verification = None
    reason = found.reason
    if plan.verify and found.value is not None and reason != "interrupted":
        try:
            verification = verify(plan, found.value)
        except KeyboardInterrupt:
            # the answer stands as the search proved it, unverified
            reason = "interrupted"
    runs = len(found.trials) + (verification.runs if verification is not None else 0)
    return FitRecord(
        parameter=plan.parameter,
        value=found.value,
        runs=runs,
        verified=verification is not None and verification.verified,
        command=[*plan.target, *plan.args, *plan.templates],
        budget=dict(plan.limits),
        aims=aims,
        margin=plan.margin,
        tolerance=plan.tolerance,
        start=start,
        start_from=start_from,
        low=plan.low,
        high=plan.high,
        reason=reason,
        trials=found.trials,
        laws=found.laws,
        non_monotonic=found.non_monotonic,
        verification=verification,
    )


def first_value(plan: FitPlan) -> tuple[int, str]:
    """The first value tried and where it came from: ``--start``, the program's own value (its
    script's constant or the environment variable), else ``--min``. The program's value is taken
    only within ``[low, high]``."""
    if plan.start is not None:
        return plan.start, "--start"
    own = program_value(plan.target, plan.parameter, os.environ)
    if own is not None and own >= plan.low and (plan.high is None or own <= plan.high):
        return own, "the program's own value"
    return plan.low, "--min"


def _run_job(job: Job) -> JobResult:
    """``execute_job`` in a thread, so that Ctrl-C here stops the run (its own session: the
    terminal's interrupt does not reach it) before going on up. Ctrl-C only sets ``cancel`` while
    the job runs: a KeyboardInterrupt raised inside ``Event.wait`` can leave the event's lock held
    (the interrupt lands between the lock's acquire and the ``with`` that releases it), and then
    neither the job thread's ``done.set()`` nor a second wait ever returns (seen once on CI: fit
    hung after Ctrl-C). Raised once the job has stopped."""
    cancel = threading.Event()
    done = threading.Event()
    out: list[JobResult] = []

    def work() -> None:
        try:
            out.append(execute_job(job, cancel))
        finally:
            done.set()

    previous = signal.getsignal(signal.SIGINT)
    installed = False
    with contextlib.suppress(ValueError):  # not the main thread: Ctrl-C is not ours to take
        signal.signal(signal.SIGINT, lambda _signum, _frame: cancel.set())
        installed = True
    try:
        threading.Thread(target=work, daemon=True).start()
        while not done.wait(0.2):
            pass
    finally:
        if installed and previous is not None:
            signal.signal(signal.SIGINT, previous)
    if cancel.is_set():
        raise KeyboardInterrupt
    return out[0]


def _trial(
    value: int,
    guided: bool,
    data: dict[str, object] | None,
    error: str | None,
    exit_code: int | None,
    seconds: float,
    aims: dict[str, float],
) -> FitTrial:
    if data is None:
        return FitTrial(value, {}, False, exit_code, error or "not measured", seconds, guided=guided)
    profile = Profile.from_dict(data)
    figures = {m: f for m, f in figures_of(profile).items() if m in aims}
    if error is None and profile.exit.code != 0:
        error = f"exit {profile.exit.code}" + (" (OOM-killed)" if profile.exit.oom_killed else "")
    over = tuple(m for m, limit in aims.items() if m in figures and figures[m] > limit)
    missing = [m for m in aims if m not in figures]
    if missing and error is None:
        raise UsageError(
            f"the run at {value} gave no {', '.join(missing)} figure to hold to the budget "
            "(gpu: no GPU seen; step: no torch training steps)"
        )
    fits = error is None and not over
    return FitTrial(value, figures, fits, exit_code, error, seconds, over, guided)


def verify(plan: FitPlan, value: int) -> FitVerification:
    """The answer run cold under the budget's ``rss`` as a hard memory limit (with the unlimited
    run ``prove_limit`` compares it to), or, without an ``rss`` limit, once more plainly."""
    from memgauge.runner import parse_target, prove_limit

    sweep = plan.sweep_plan()
    job = sweep.job({plan.parameter: value}, f"fit-verify-{value}")
    limit = plan.limits.get("rss")
    if limit is None:
        result = execute_job(job)
        t = _trial(value, False, result.profile, result.error, result.exit_code, result.seconds, plan.limits)
        return FitVerification(
            value,
            None,
            t.error is None,
            t.fits,
            t.exit_code,
            0,
            0,
            t.figures.get("wall", 0.0),
            int(t.figures.get("rss", 0)),
            int(t.figures.get("rss", 0)),
            1,
            t.over,
        )
    target = parse_target(list(job.target))
    env = {**os.environ, **job.env}
    base, limited = prove_limit(target, int(limit), cold=True, env=env)
    over = tuple(
        m for m, figure in (("wall", limited.wall_seconds),) if m in plan.limits and figure > plan.limits[m]
    )
    return FitVerification(
        value=value,
        limit_bytes=int(limit),
        survived=limited.survived,
        verified=limited.survived and base.exit_code == 0 and not over,
        exit_code=limited.exit_code,
        oom_kills=limited.oom_kills,
        limit_hits=limited.limit_hits,
        wall_seconds=limited.wall_seconds,
        peak_bytes=limited.peak_bytes,
        unlimited_peak_bytes=base.peak_bytes,
        runs=2,
        over=over,
    )
