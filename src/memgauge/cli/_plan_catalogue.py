"""``memgauge plan --catalogue machines.toml --sweep sweep.json``: which machine of the user's
catalogue runs the swept program best for the money (``analysis.choose_machines``), and its report
in every format."""

from __future__ import annotations

import json
import os
import statistics
import sys
from dataclasses import dataclass
from typing import Any

from memgauge._errors import LimitError, ProfileFormatError, TargetNotFoundError, UsageError
from memgauge.analysis import MachineChoice, Shape

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgauge.analysis import WorkerLaws
    from memgauge.model import SweepResult, Value
    from memgauge.runner import Target

__all__ = ["Emulated", "emulate", "load_catalogue", "machines_report"]


def _toml() -> Any:
    # tomllib is 3.11's; tomli is the same reader, a dependency on 3.10 only
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    import tomli  # type: ignore[import-not-found, unused-ignore]

    return tomli


def load_catalogue(path: str) -> list[Shape]:
    """``[[machine]]`` tables: ``name``, ``cores``, ``memory`` (a size such as "16GiB") and
    ``price_per_hour``."""
    from memgauge._units import parse_bytes

    if not os.path.isfile(path):
        raise TargetNotFoundError(f"no catalogue {path}")
    try:
        with open(path, "rb") as f:
            data = _toml().load(f)
    except ValueError as e:
        raise ProfileFormatError(f"catalogue {path} is not valid TOML: {e}") from None
    shapes: list[Shape] = []
    for i, entry in enumerate(data.get("machine", [])):
        where = f"catalogue {path}, machine {i + 1}"
        try:
            shape = Shape(
                name=str(entry["name"]),
                cores=int(entry["cores"]),
                memory_bytes=parse_bytes(str(entry["memory"])),
                price_per_hour=float(entry["price_per_hour"]),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ProfileFormatError(f"{where}: needs name, cores, memory and price_per_hour ({e})") from None
        if shape.cores < 1 or shape.memory_bytes <= 0 or shape.price_per_hour < 0:
            raise ProfileFormatError(f"{where}: cores, memory and price must be positive")
        shapes.append(shape)
    if not shapes:
        raise ProfileFormatError(f"catalogue {path} lists no [[machine]]")
    return shapes


@dataclass(frozen=True)
class Emulated:
    """A shape emulated on this host: the program at the chosen worker count under the shape's
    CPU quota and memory limit; ``measured`` its median rate over ``runs`` (items per wall second,
    as the sweep's)."""

    name: str
    workers: int
    predicted: float
    measured: float | None
    outcome: str
    runs: int = 1

    @property
    def ratio(self) -> float | None:
        return None if self.measured is None or self.predicted <= 0 else self.measured / self.predicted


def emulate(
    result: SweepResult,
    param: str,
    metric: str,
    choices: list[MachineChoice],
    *,
    runs: int = 1,
    quiet: bool,
) -> list[Emulated]:
    """Each shape with a worker count that fits, and no more cores than this host has, run
    ``runs`` times (the median rate): its CPU time capped at its cores (a CPU cgroup's quota), its
    memory at its memory (the memory group's limit), the sweep's other parameters as the sweep set
    them."""
    from memgauge.cli._common import say
    from memgauge.runner import parse_target

    if any("{" in a for a in result.command):
        raise UsageError(
            "--emulate takes a sweep whose parameters reach the program as environment variables"
        )
    fixed = {k: v[0] for k, v in result.params.items() if k != param}
    target = parse_target(list(result.command))
    host = os.cpu_count() or 1
    out: list[Emulated] = []
    for c in choices:
        if c.workers == 0 or c.shape.cores > host:
            continue
        rates: list[float] = []
        outcome = "ran"
        for _ in range(runs):
            measured, outcome = _emulated_run(target, c, param, fixed, metric)
            if measured is None:
                break
            rates.append(measured)
        median = statistics.median(rates) if rates and outcome == "ran" else None
        out.append(Emulated(c.shape.name, c.workers, c.rate, median, outcome, len(rates)))
        if not quiet:
            say(f"  emulated {c.shape.name} ({c.shape.cores} cores, {c.workers} workers): {outcome}\n")
    return out


def _emulated_run(
    target: Target, c: MachineChoice, param: str, fixed: dict[str, Value], metric: str
) -> tuple[float | None, str]:
    from memgauge.runner import RunOptions, quiet_program, run_program
    from memgauge.watcher import create_cpu_group

    group, reason = create_cpu_group(c.shape.cores)
    if group is None:
        raise LimitError(f"cannot emulate a shape's cores: {reason}")
    env = {**os.environ, **{k: _plain(v) for k, v in fixed.items()}, param: str(c.workers)}
    options = RunOptions(
        cgroup="auto",
        memory_limit_bytes=c.shape.memory_bytes,
        lines="off",
        env=env,
        join_groups=(group.procs_file,),
    )
    try:
        with quiet_program():
            profile = run_program(target, options)
    finally:
        group.close()
    items = profile.metrics.get(metric)
    if profile.exit.code == 0 and items is not None and profile.wall_seconds > 0:
        return items / profile.wall_seconds, "ran"
    return None, "OOM-killed" if profile.exit.oom_killed else "failed"


def _plain(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _row(c: MachineChoice) -> dict[str, Any]:
    return {
        "name": c.shape.name,
        "cores": c.shape.cores,
        "memory_bytes": c.shape.memory_bytes,
        "price_per_hour": c.shape.price_per_hour,
        "workers": c.workers,
        "rate": c.rate,
        "rate_low": c.rate_low,
        "rate_high": c.rate_high,
        "extrapolated": c.extrapolated,
        "memory_at_workers_bytes": c.memory_bytes,
        "cost_per_million": c.cost_per_million,
        "reaches_target": c.reaches_target,
    }


def machines_report(
    laws: WorkerLaws,
    choices: list[MachineChoice],
    cheapest: MachineChoice | None,
    target_rate: float | None,
    fmt: str,
    emulated: list[Emulated] | None = None,
) -> str:
    """The catalogue's answer as ``fmt``: terminal, md or json."""
    from memgauge._units import format_bytes

    if fmt == "json":
        from memgauge.model import MACHINES

        data = MACHINES.wrap(
            {
                "metric": laws.metric,
                "measured": [
                    {"workers": w, "rate": r, "memory_bytes": m}
                    for w, r, m in zip(laws.counts, laws.rates, laws.memory, strict=True)
                ],
                "serial_share": laws.serial_share,
                "target_rate": target_rate,
                "machines": [_row(c) for c in choices],
                "cheapest": None if cheapest is None else cheapest.shape.name,
                "emulated": [
                    {
                        "name": e.name,
                        "workers": e.workers,
                        "predicted": e.predicted,
                        "measured": e.measured,
                        "outcome": e.outcome,
                    }
                    for e in emulated or []
                ],
            }
        )
        return json.dumps(data, indent=2) + "\n"
    measured = ", ".join(f"{w:g}: {r:,.1f}/s" for w, r in zip(laws.counts, laws.rates, strict=True))
    head = [
        f"{laws.metric} per second by workers, measured: {measured}; Amdahl's serial share "
        f"{laws.serial_share:.2f}; memory {format_bytes(laws.memory_base)} + "
        f"{format_bytes(laws.memory_per_worker)} per worker",
    ]
    if cheapest is None:
        head.append("no machine of the catalogue reaches the target" if target_rate else "no machine fits")
    else:
        goal = f"reaching {target_rate:,.1f}/s" if target_rate else "per million items"
        head.append(f"cheapest {goal}: {cheapest.shape.name}, {cheapest.workers} worker(s)")
    headers = [
        "machine",
        "cores",
        "memory",
        "per hour",
        "workers",
        "rate/s",
        "range",
        "memory used",
        "per 1M",
    ]
    rows = []
    for c in choices:
        span = f"{c.rate_low:,.1f}-{c.rate_high:,.1f} extrapolated" if c.extrapolated else "measured"
        rows.append(
            [
                c.shape.name,
                str(c.shape.cores),
                format_bytes(c.shape.memory_bytes),
                f"{c.shape.price_per_hour:.4g}",
                str(c.workers) if c.workers else "none fit",
                f"{c.rate:,.1f}",
                span,
                format_bytes(c.memory_bytes),
                "—" if c.cost_per_million is None else f"{c.cost_per_million:.4g}",
            ]
        )
    for e in emulated or []:
        ratio = e.ratio
        if ratio is None:
            head.append(f"emulated {e.name}, {e.workers} worker(s): {e.outcome}")
        else:
            head.append(
                f"emulated {e.name}, {e.workers} worker(s): {e.measured:,.1f}/s measured, "
                f"{e.predicted:,.1f}/s predicted ({ratio:.2f}x)"
            )
    if fmt == "md":
        lines = [
            *(f"- {h}" for h in head),
            "",
            "| " + " | ".join(headers) + " |",
            "|" + "---|" * len(headers),
        ]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines) + "\n"
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    table = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [headers, *rows]]
    return "\n".join([*head, "", *table]) + "\n"
