"""Running a sweep: one job per point and repeat, through an engine, recorded as it goes.

Every run is a fresh ``memgauge run`` in its own process (``_job``), so a point's peak never
pollutes another's. The record is rewritten after each run: a sweep interrupted or killed keeps
every run that finished.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass, field

from memgauge._version import __version__
from memgauge.analysis import summarize
from memgauge.model import Point, Profile, RunSummary, SweepResult, Value
from memgauge.sweep._engine import Engine, JobHandle
from memgauge.sweep._fit_knobs import check_reached, knob_env
from memgauge.sweep._job import Job, JobResult, Resources
from memgauge.sweep._params import environment, expand, format_value, grid, substitute


@dataclass
class SweepPlan:
    """``target``: the script (``["prog.py"]``) or module (``["-m", "mod"]``); ``args``: the
    program's own arguments, ``{NAME}`` substituted; ``templates``: ``--arg`` templates, expanded
    and split, after ``args``."""

    target: list[str]
    params: dict[str, list[Value]]
    args: list[str] = field(default_factory=list)
    templates: list[str] = field(default_factory=list)
    repeat: int = 1
    run_options: list[str] = field(default_factory=list)
    resources: Resources = field(default_factory=Resources)
    timeout_seconds: float | None = None
    cwd: str | None = None
    save_dir: str | None = None

    def job(self, point: dict[str, Value], job_id: str) -> Job:
        argv = [*self.target, *substitute(self.args, point), *expand(self.templates, point)]
        knobs = knob_env(point, [*self.args, *self.templates], argv[len(self.target) :])
        return Job(
            id=job_id,
            target=tuple(argv),
            env={**environment(point), **knobs},
            cwd=self.cwd or os.getcwd(),
            run_options=tuple(self.run_options),
            resources=self.resources,
            timeout_seconds=self.timeout_seconds,
        )

    def command(self) -> list[str]:
        return [*self.target, *self.args, *self.templates]


@dataclass(frozen=True)
class SweepProgress:
    done: int
    total: int
    params: dict[str, Value]
    run: RunSummary
    elapsed: float
    remaining: float | None  # seconds, estimated


def point_label(params: dict[str, Value]) -> str:
    return " ".join(f"{k}={format_value(v)}" for k, v in params.items())


def _slug(params: dict[str, Value]) -> str:
    text = "-".join(f"{k}={format_value(v)}" for k, v in params.items())
    return "".join(c if c.isalnum() or c in "=.-_" else "_" for c in text)[:150] or "point"


def run_summary(result: JobResult, save_dir: str | None, name: str) -> RunSummary:
    """A job's result as a run of the sweep (its profile saved under ``save_dir`` when given)."""
    if result.profile is None:
        return RunSummary(
            ok=False,
            exit="not measured",
            error=result.error or "no profile",
            host=result.host,
            output_tail=result.output_tail,
        )
    try:
        profile = Profile.from_dict(result.profile)
    except Exception as e:  # a profile from another memgauge version on a cluster node
        return RunSummary(ok=False, exit="not measured", error=f"unreadable profile: {e}", host=result.host)
    run = summarize(profile)
    run.host = result.host
    if result.error is not None:  # stopped: timeout or cancelled, figures up to then
        run.ok = False
        run.exit = result.error
    if not run.ok:
        run.output_tail = result.output_tail
    if save_dir is not None:
        path = os.path.join(save_dir, f"{name}.json")
        profile.save(path)
        run.profile_path = path
    return run


def run_sweep(
    plan: SweepPlan,
    engine: Engine,
    *,
    record_path: str | None = None,
    on_progress: Callable[[SweepProgress], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> SweepResult:
    """Run every point ``plan.repeat`` times. Ctrl-C (KeyboardInterrupt) cancels what is left; the
    record then holds the finished runs, marked incomplete, and the interrupt goes on up."""
    points = [Point(p) for p in grid(plan.params)]
    result = _new_result(plan, engine, points)
    if plan.save_dir is not None:
        os.makedirs(plan.save_dir, exist_ok=True)
    slots: dict[str, tuple[int, int]] = {}
    runs: dict[int, dict[int, RunSummary]] = {i: {} for i in range(len(points))}
    handles: list[JobHandle] = []
    t0 = clock()
    durations: dict[int, list[float]] = {}
    try:
        _submit_all(plan, engine, points, slots, handles)
        pending = {h.future: h for h in handles}
        done = 0
        while pending:
            finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for future in finished:
                handle = pending.pop(future)
                i, r = slots[handle.job.id]
                job_result = future.result()
                run = _summary(plan, job_result, handle.job.id)
                runs[i][r] = run
                points[i].runs = [runs[i][k] for k in sorted(runs[i])]
                durations.setdefault(i, []).append(job_result.seconds)
                done += 1
                if record_path is not None:
                    result.save(record_path)
                if on_progress is not None:
                    remaining = _remaining(durations, points, plan.repeat, engine.concurrency)
                    on_progress(
                        SweepProgress(done, len(handles), points[i].params, run, clock() - t0, remaining)
                    )
        result.complete = True
    except BaseException:
        for h in handles:
            h.cancel()
        raise
    finally:
        if record_path is not None:
            result.save(record_path)
    return result


def _submit_all(
    plan: SweepPlan,
    engine: Engine,
    points: list[Point],
    slots: dict[str, tuple[int, int]],
    handles: list[JobHandle],
) -> None:
    """Every run of every point submitted, each handle added to ``handles`` as it is (what an
    interrupt cancels) and its (point, repeat) to ``slots`` by job id."""
    for i, point in enumerate(points):
        for r in range(plan.repeat):
            # the slug alone can name two points ("a b" and "a_b", or long values cut at the
            # same place): the point's number keeps job ids, and saved profiles, apart
            job_id = f"p{i + 1}-{_slug(point.params)}-r{r + 1}"
            slots[job_id] = (i, r)
            handles.append(engine.submit(plan.job(point.params, job_id)))


def _new_result(plan: SweepPlan, engine: Engine, points: list[Point]) -> SweepResult:
    import datetime

    return SweepResult(
        command=plan.command(),
        params=plan.params,
        repeat=plan.repeat,
        engine=engine.name,
        concurrency=engine.concurrency,
        started_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        memgauge_version=__version__,
        points=points,
        complete=False,
    )


def _summary(plan: SweepPlan, job_result: JobResult, job_id: str) -> RunSummary:
    """A finished job's run summary (its profile saved where asked), refused where the program
    ran to its end without reading a swept parameter: that would make a flat "constant" law (a
    run stopped or failed early may not have got to reading it)."""
    if job_result.profile is not None and job_result.error is None and job_result.exit_code == 0:
        check_reached(job_result.profile, plan.params)
    return run_summary(job_result, plan.save_dir, job_id)


def _remaining(
    durations: dict[int, list[float]], points: Sequence[Point], repeat: int, concurrency: int | None
) -> float | None:
    """Seconds left: a point's runs take what its finished runs took; a point not yet seen takes
    what the slowest point so far took (sizes usually grow along the grid)."""
    if not durations:
        return None
    slowest = max(sum(d) / len(d) for d in durations.values())
    left = 0.0
    for i in range(len(points)):
        seen = durations.get(i, [])
        each = sum(seen) / len(seen) if seen else slowest
        left += each * (repeat - len(seen))
    return left / max(1, concurrency or 1)


def confirm(plan: SweepPlan, engine: Engine, params: dict[str, Value], number: int = 1) -> RunSummary:
    """One run at ``params`` (a size the analysis chose), through the same engine. ``number``: the
    sweep's how-manieth confirming run, which keeps apart two whose slugs are alike."""
    job_id = f"confirm{number}-{_slug(params)}"
    handle = engine.submit(plan.job(params, job_id))
    try:
        return run_summary(handle.future.result(), plan.save_dir, job_id)
    except BaseException:
        handle.cancel()
        raise
