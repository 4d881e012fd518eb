"""The terminal report of ``memgauge fit``, and the progress line of each trial."""

from __future__ import annotations

from memgauge.model import FitRecord, FitTrial
from memgauge.render._format import format_figure, percent

# what each fit metric measures (the limits of ``sweep.FIT_METRICS``)
UNITS = {"rss": "bytes", "gpu": "bytes", "wall": "seconds", "step": "seconds"}
LABELS = {"rss": "container needs", "gpu": "GPU peak", "wall": "wall", "step": "step (median)"}


def figure(metric: str, value: float | None) -> str:
    return format_figure(value, UNITS.get(metric, "count"))


def fit_trial_line(parameter: str, trial: FitTrial) -> str:
    """One trial as the progress line ``memgauge fit`` writes on stderr."""
    figures = ", ".join(f"{m} {figure(m, v)}" for m, v in trial.figures.items())
    if trial.error is not None:
        verdict = f"failed ({trial.error})"
    elif trial.fits:
        verdict = "fits"
    else:
        verdict = "over (" + ", ".join(trial.over) + ")"
    how = "law" if trial.guided else "step"
    return f"  {parameter}={trial.value:<10} {verdict:<18} {figures}  [{how}, {trial.seconds:.1f} s]"


def budget_text(record: FitRecord) -> str:
    parts = [f"{m} <= {figure(m, v)}" for m, v in record.budget.items()]
    text = ", ".join(parts)
    if record.margin > 0:
        aims = ", ".join(f"{m} <= {figure(m, v)}" for m, v in record.aims.items())
        text += f" (searched within {aims}: a {percent(record.margin)} margin)"
    return text


def verdict_text(record: FitRecord) -> str:
    v = record.verification
    if record.value is None:
        return "not verified: nothing fits"
    if v is None:
        why = "interrupted" if record.reason == "interrupted" else "--no-verify"
        return f"not verified ({why})"
    if v.limit_bytes is None:
        state = "within the budget" if v.verified else "over: " + ", ".join(v.over or ("failed",))
        return f"verified by a plain run (no memory limit in the budget): {state}"
    outcome = "survived" if v.survived else ("OOM-killed" if v.oom_kills else f"failed (exit {v.exit_code})")
    text = (
        f"under {figure('rss', v.limit_bytes)} as a hard limit, caches cold: {outcome}; cgroup peak "
        f"{figure('rss', v.peak_bytes)} (unlimited {figure('rss', v.unlimited_peak_bytes)}), "
        f"limit hit {v.limit_hits} times, wall {figure('wall', v.wall_seconds)}"
    )
    if v.over:
        text += "; over " + ", ".join(v.over)
    return ("verified " if v.verified else "NOT verified ") + text


class TerminalFitRenderer:
    def __init__(self, width: int = 100, color: bool = False) -> None:
        self.width = width
        self.color = color

    def render(self, record: FitRecord) -> str:
        name = record.parameter
        if record.value is None and record.reason == "interrupted":
            head = f"memgauge fit: interrupted before any value of {name} was proven to fit"
        elif record.value is None:
            head = f"memgauge fit: no value of {name} from {record.low} fits the budget"
        else:
            over = [t.value for t in record.trials if not t.fits and t.value > record.value]
            where = {
                "boundary": f"{name}={record.value + 1} does not",
                "tolerance": f"{name}={min(over, default=record.value + 1)} does not: within "
                f"{percent(record.tolerance)}",
                "maximum fits": "the largest value allowed (--max)",
                "too large": "the search stopped growing",
                "interrupted": "interrupted: the largest value proven to fit so far",
            }.get(record.reason, record.reason)
            head = f"memgauge fit: {name} = {record.value}  ({where})"
        search = len(record.trials)
        lines = [
            head,
            f"budget: {budget_text(record)}",
            f"runs: {record.runs} ({search} search, {record.runs - search} verification)"
            + (f"; started at {record.start} ({record.start_from})" if record.start is not None else ""),
            verdict_text(record),
        ]
        for metric, law in record.laws.items():
            lines.append(f"law of {LABELS.get(metric, metric)}: {law}")
        metrics = list(record.budget)
        header = f"  {name:>10}  " + "".join(f"{LABELS.get(m, m):>15}" for m in metrics) + "  result"
        lines += ["", "trials (by value):", header]
        for t in sorted(record.trials, key=lambda t: t.value):
            cells = "".join(f"{figure(m, t.figures.get(m)):>15}" for m in metrics)
            result = "fits" if t.fits else (f"failed: {t.error}" if t.error else "over " + ", ".join(t.over))
            lines.append(f"  {t.value:>10}  {cells}  {result}")
        if record.non_monotonic:
            lines += ["", "not monotonic (the search assumed a larger value never needs less):"]
            for n in record.non_monotonic:
                if n.metric == "fits":
                    lines.append(f"  {name}={n.value} fits although {name}={n.below} did not")
                else:
                    lines.append(
                        f"  {name}={n.value}: {LABELS.get(n.metric, n.metric)} {figure(n.metric, n.figure)}, "
                        f"below {figure(n.metric, n.below_figure)} at {name}={n.below}"
                    )
        return "\n".join(lines) + "\n"
