"""What the sweep reports show of the record besides the fits: the phases and metrics its runs
have, how each point's runs ended, which runs failed, the phase shares in size order, the law
that came second, and how close a confirmation run came to its limit."""

from __future__ import annotations

from memgauge.analysis._growth import Fit, Growth
from memgauge.analysis._sweep_series import is_numeric
from memgauge.analysis._sweep_shares import PhaseShares
from memgauge.model import Confirmation, Point, RunSummary, SweepResult, Value


def top_phases(result: SweepResult) -> list[str]:
    """The outermost phases' names, in the order the runs first show them."""
    names: dict[str, None] = {}
    for point in result.points:
        for run in point.runs:
            names.update(dict.fromkeys(n for n, ph in run.phases.items() if ph.depth == 0))
    return list(names)


def run_metrics(result: SweepResult) -> list[str]:
    """The names of the program's own metrics (``metric:NAME``), sorted."""
    return sorted({m for p in result.points for run in p.runs for m in run.metrics})


def points_measured(result: SweepResult) -> tuple[int, int]:
    """How many points have a run, of how many the parameters make."""
    total = 1
    for values in result.params.values():
        total *= len(values)
    return sum(1 for p in result.points if p.runs), total


def exit_summary(point: Point, repeat: int) -> str:
    """``"ok"``, ``"2/3 failed: killed by the OOM killer"``, ``"not run"``; runs missing from an
    interrupted sweep are counted (``"ok (1 of 2 runs)"``)."""
    runs = point.runs
    if not runs:
        return "not run"
    failed = [r for r in runs if not r.ok]
    missing = f" ({len(runs)} of {repeat} runs)" if len(runs) < repeat else ""
    if not failed:
        return "ok" + missing
    first = failed[0]
    why = f"{first.exit}: {first.error}" if first.error else first.exit
    return f"{len(failed)}/{len(runs)} failed: {why}{missing}"


def failed_runs(result: SweepResult) -> list[tuple[Point, int, RunSummary]]:
    """The failed runs that printed something, each with its point and its number there (from 1):
    the end of a run's output says why it failed, "exit 1" alone does not."""
    return [
        (p, i, run)
        for p in result.points
        for i, run in enumerate(p.runs, 1)
        if not run.ok and run.output_tail.strip()
    ]


def share_rows(s: PhaseShares) -> list[tuple[Value, tuple[float, ...], float]]:
    """(size, each phase's share, the rest) per size, smallest first: the record keeps the order the
    points ran in (``N=150,5`` runs the big one first), a bar chart reads left to right."""
    rows = list(zip(s.xs, s.shares, s.other, strict=True))
    if is_numeric(s.xs):
        rows.sort(key=lambda row: float(row[0]))
    return rows


def runner_up(growth: Growth) -> tuple[Fit, float] | None:
    """The law with the lowest AICc after the chosen one, and its AICc minus the chosen one's
    (negative where the chosen law won by being simpler, not by fitting better)."""
    others = [f for f in growth.candidates if f.law != growth.best.law]
    if not others:
        return None
    other = others[0]
    return other, other.aicc - growth.best.aicc


def limit_share(confirmation: Confirmation) -> float | None:
    """The measured figure as a share of its limit: it tells a run 2% over from one at the limit
    when both read "1.0 GiB". None where the run has no figure."""
    c = confirmation
    return c.measured / c.limit if c.measured is not None and c.limit > 0 else None
