"""Running the what-if table of remedies (``memgauge fit --remedies``): the baseline and each remedy
in a fresh process of its own, the same program, arguments and batch; rows in
``analysis.remedy_table``.

The hooked remedies (checkpoint, autocast, offload on torch; dtypes on pandas) are asked through
``MEMGAUGE_REMEDY`` and list what they hooked in a file the run writes (``sections/torch/_capture_remedies``,
``capture._remedies_tabular``); no file: the program never imported the library. Gradient accumulation is the
program at a micro-batch (the batch parameter divided by k, set as a knob: an environment variable
and a module constant, ``capture``'s knobs), so it needs the batch parameter and its value.
With a budget, each row is run a second time at half its batch, for the two-point law of the
largest batch (``analysis.largest_under``).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field

from memgauge._env import ENV_KNOBS, ENV_REMEDY, ENV_REMEDY_REPORT
from memgauge._errors import UsageError
from memgauge.analysis import RemedyMeasure, RemedyTable, remedy_table
from memgauge.capture import knobs_request
from memgauge.model import Profile
from memgauge.runner import RunOptions, Target, run_program

REMEDIES = ("checkpoint", "autocast", "offload", "accumulate", "dtypes")


@dataclass
class RemedyPlan:
    """``target``: the program; ``remedies``: names from ``REMEDIES``; ``parameter``/``value``: the
    batch knob and the baseline's batch (needed by ``accumulate`` and by ``budget_bytes``);
    ``accumulate``: k, the accumulation factor; ``budget_bytes``: the resident budget the largest
    batch is found for (None: no such column)."""

    target: Target
    remedies: list[str] = field(default_factory=lambda: list(REMEDIES))
    parameter: str | None = None
    value: int | None = None
    accumulate: int = 4
    budget_bytes: int | None = None
    cwd: str | None = None


def parse_remedies(text: str) -> list[str]:
    """``all`` or a comma-separated list of ``REMEDIES``; an unknown name is a usage error."""
    if text.strip() in ("", "all"):
        return list(REMEDIES)
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in REMEDIES]
    if unknown:
        raise UsageError(f"unknown remedy {unknown[0]!r}: choose from {', '.join(REMEDIES)} or all")
    return names


def run_remedies(plan: RemedyPlan, progress: Callable[[str], None] | None = None) -> RemedyTable:
    """The baseline, then each remedy, each in a fresh process; the table of their figures."""
    needs_batch = "accumulate" in plan.remedies or plan.budget_bytes is not None
    if needs_batch and (plan.parameter is None or plan.value is None):
        raise UsageError(
            "the remedies' accumulation and largest batch need the batch parameter and its value"
        )
    measures = [_measure(plan, "baseline", (), plan.value, 1, progress)]
    for name in plan.remedies:
        if name == "accumulate":
            k = plan.accumulate
            if plan.value is None or plan.value < 2 * k:
                reason = (
                    f"accumulate: the batch {plan.value} cannot be split in {k} micro-batches of 2 or more"
                )
                measures.append(RemedyMeasure(name, None, not_applied=[reason]))
                continue
            measures.append(_measure(plan, name, (), plan.value // k, k, progress))
        else:
            measures.append(_measure(plan, name, (name,), plan.value, 1, progress))
    return remedy_table(measures, plan.budget_bytes)


def _measure(
    plan: RemedyPlan,
    name: str,
    hooks: tuple[str, ...],
    batch: int | None,
    k: int,
    progress: Callable[[str], None] | None,
) -> RemedyMeasure:
    if progress is not None:
        progress(name)
    profile, report = _run(plan, hooks, batch)
    measure = RemedyMeasure(name, profile, batch=batch, steps_per_update=k)
    if hooks:
        if report is not None:
            measure.hooked = [str(h) for h in report.get("hooked", [])]
            measure.not_applied = [str(n) for n in report.get("not_applied", [])]
        if not measure.hooked:
            if not measure.not_applied:
                measure.not_applied.append(f"{name}: {_why_nothing(name, profile, report is None)}")
            measure.profile = None  # nothing changed: its run is the baseline's again
            return measure
    elif k > 1:
        measure.hooked = [f"accumulate: {plan.parameter}={batch} (micro-batch), {k} steps per update"]
    if plan.budget_bytes is not None and batch is not None and batch >= 2:
        measure.half_batch = batch // 2
        measure.half, _ = _run(plan, hooks, batch // 2)
    return measure


def _why_nothing(name: str, profile: Profile, no_report: bool) -> str:
    """Nothing hooked and no reason given: the hooks write their report as soon as their library
    loads, so without one the program never imported it."""
    if name == "dtypes":
        if no_report:
            return "the program does not use pandas"
        return "the program imports pandas but reads no frame with read_csv or read_parquet"
    if no_report and profile.torch is None:
        return "the program does not use torch"
    return "no module with parameters was called, nothing was hooked"


def _run(
    plan: RemedyPlan, hooks: tuple[str, ...], batch: int | None
) -> tuple[Profile, dict[str, list[str]] | None]:
    env = dict(os.environ)
    env.pop(ENV_REMEDY, None)
    if plan.parameter is not None and batch is not None:
        env[plan.parameter] = str(batch)
        env.update(knobs_request({plan.parameter: batch}, [], []))
    else:
        env.pop(ENV_KNOBS, None)
    with tempfile.TemporaryDirectory(prefix="memgauge-remedy-") as scratch:
        report_path = os.path.join(scratch, "hooked.json")
        if hooks:
            env[ENV_REMEDY] = ",".join(hooks)
            env[ENV_REMEDY_REPORT] = report_path
        options = RunOptions(lines="off", env=env, cwd=plan.cwd)
        profile = run_program(plan.target, options)
        report: dict[str, list[str]] | None = None
        try:
            with open(report_path, encoding="utf-8") as f:
                loaded = json.load(f)
            if isinstance(loaded, dict):
                report = {k: [str(x) for x in v] for k, v in loaded.items() if isinstance(v, list)}
        except (OSError, ValueError):
            report = None
    return profile, report
