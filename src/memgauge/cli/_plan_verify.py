"""``memgauge plan``'s inputs and proofs: profiles read or programs measured once each, and the
verifying runs (``--verify``) of the members together at the offsets the plan assumed."""

from __future__ import annotations

import os
import random
from dataclasses import replace

from memgauge._errors import UsageError
from memgauge.cli._common import load_profile, say

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from memgauge.analysis import PlanInput
    from memgauge.model import MaxCopies, PlanRecord, PlanRun, Profile


def read_inputs(
    paths: Sequence[str], *, cores: int, every: dict[str, float], quiet: bool
) -> tuple[list[PlanInput], list[str]]:
    """One member per path: a ``memgauge run`` profile (``.json``), else a program run once here,
    measured as ``memgauge run`` does (its output discarded). Also the roots whose files the
    verifying runs evict from page cache."""
    from memgauge.analysis import plan_input
    from memgauge.runner import default_roots, parse_target

    out: list[PlanInput] = []
    roots: set[str] = set()
    unknown = set(every) - set(paths)
    if unknown:
        raise UsageError(f"--every names {sorted(unknown)[0]!r}, which is not one of the inputs")
    for path in paths:
        if path.endswith(".json"):
            profile = load_profile(path)
            command = list(profile.command)
            # the files it maps: the interpreter's installation and its own directory
            if len(command) > 1 and command[0] == "python":
                roots.update(default_roots(parse_target(command[1:])))
        else:
            target = parse_target([path])
            target.check()
            if not quiet:
                say(f"measuring {path} (once) ...\n")
            profile = _measure(target)
            command = target.display()
            roots.update(default_roots(target))
        name = os.path.splitext(os.path.basename(path))[0]
        period = every.get(path)
        member = plan_input(
            profile, name=name, source=path, command=command, cores=cores, period_seconds=period
        )
        out.append(member)
    return out, sorted(roots)


def _measure(target: object) -> Profile:
    from memgauge.runner import RunOptions, Target, quiet_program, run_program

    assert isinstance(target, Target)
    with quiet_program():
        return run_program(target, RunOptions(cgroup="auto", lines="off"))


def _run(
    label: str,
    inputs: list[PlanInput],
    offsets: list[float],
    limit: int,
    roots: Sequence[str],
    stall: float,
    quiet: bool,
) -> PlanRun:
    from memgauge.analysis import combined_peak
    from memgauge.model import PlanRun
    from memgauge.runner import run_together

    longest = max(o + i.member.duration_seconds for i, o in zip(inputs, offsets, strict=True))
    cap = max(20.0, stall * longest) if stall > 0 else None
    together = run_together([i.member.command for i in inputs], offsets, limit, roots=roots, wall_cap=cap)
    slowdowns = [
        w / i.member.duration_seconds
        for w, i, c in zip(together.walls, inputs, together.exit_codes, strict=True)
        if c == 0 and i.member.duration_seconds > 0
    ]
    run = PlanRun(
        label=label,
        copies=len(inputs),
        offsets_seconds=[round(o, 3) for o in offsets],
        limit_bytes=limit,
        survived=together.survived,
        oom_kills=together.oom_kills,
        limit_hits=together.limit_hits,
        peak_bytes=together.peak_bytes,
        wall_seconds=together.wall_seconds,
        slowdown=max(slowdowns) if slowdowns else None,
        exit_codes=together.exit_codes,
        predicted_bytes=combined_peak(inputs, offsets),
        stalled=together.stalled,
    )
    if not quiet:
        peak = run.peak_bytes >> 20
        say(f"  {label}: {run.outcome}, group peak {peak} MiB, limit hit {run.limit_hits} times\n")
    return run


def verify_plan(
    record: PlanRecord,
    inputs: list[PlanInput],
    *,
    roots: Sequence[str],
    randoms: int,
    seed: int,
    stall: float,
    quiet: bool,
) -> PlanRecord:
    """The members run together under the machine's memory: at the plan's offsets, with every
    peak aligned (the worst timing), and at ``randoms`` offsets drawn as the simulation draws them."""
    from memgauge.analysis import aligned_offsets

    limit = record.machine_bytes
    runs = [_run("given", inputs, record.offsets_seconds, limit, roots, stall, quiet)]
    aligned = aligned_offsets(inputs)
    if aligned != record.offsets_seconds:
        runs.append(_run("worst", inputs, aligned, limit, roots, stall, quiet))
    rng = random.Random(seed)
    window = record.distribution.window_seconds if record.distribution else 0.0
    for k in range(randoms):
        offsets = [
            rng.uniform(0, i.member.period_seconds) if i.member.period_seconds else rng.uniform(0, window)
            for i in inputs
        ]
        runs.append(_run(f"random {k + 1}", inputs, offsets, limit, roots, stall, quiet))
    return replace(record, runs=runs)


def prove_copies(
    found: MaxCopies,
    one: PlanInput,
    machine_bytes: int,
    *,
    roots: Sequence[str],
    stall: float,
    quiet: bool,
    window: float | None = None,
    seed: int = 0,
) -> MaxCopies:
    """``copies`` copies together, then one more: by the worst case all started at once (the
    worst timing); by a percentile, at offsets drawn as the simulation draws them (one draw: the
    rule accepts losing at the rarest timings)."""
    from memgauge.analysis import copies_of

    rng = random.Random(seed)
    span = one.member.duration_seconds if window is None else window

    def at(n: int) -> PlanRun | None:
        if n == 0:
            return None
        offsets = [0.0] * n if found.rule == "worst" else [rng.uniform(0, span) for _ in range(n)]
        return _run(f"{n} copies", copies_of(one, n), offsets, machine_bytes, roots, stall, quiet)

    return replace(found, proof=at(found.copies), refutation=at(found.copies + 1))
