"""The report of ``memgauge fit``, built once on the report document: its title (the answer and how
the search ended), the answer's figures (the budget, the runs, the verification, the laws), the
trials by value and where the figures were not monotonic. The terminal and Markdown reports render
it whole; the page (``_fit_html``) its sections, around its charts, under its own title."""

from __future__ import annotations

from memgauge.model import FitRecord
from memgauge.render._document import Column, Heading, Line, Section, Span, Table
from memgauge.render._document_report import Report, sentence
from memgauge.render._format import format_figure, percent

# what each fit metric measures (the limits of ``sweep.FIT_METRICS``)
UNITS = {"rss": "bytes", "gpu": "bytes", "wall": "seconds", "step": "seconds"}
LABELS = {"rss": "container needs", "gpu": "GPU peak", "wall": "wall", "step": "step (median)"}

TRIALS = "trials (by value)"
NOT_MONOTONIC = "not monotonic (the search assumed a larger value never needs less)"


def figure(metric: str, value: float | None) -> str:
    return format_figure(value, UNITS.get(metric, "count"))


def budget_text(record: FitRecord) -> str:
    parts = [f"{m} <= {figure(m, v)}" for m, v in record.budget.items()]
    text = ", ".join(parts)
    if record.margin > 0:
        aims = ", ".join(f"{m} <= {figure(m, v)}" for m, v in record.aims.items())
        text += f" (searched within {aims}: a {percent(record.margin)} margin)"
    return text


def verification_text(record: FitRecord) -> str:
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


def answer(record: FitRecord) -> str:
    """The answer and how the search ended: "N = 100  (N=103 does not: within 3%)"."""
    name = record.parameter
    if record.value is None and record.reason == "interrupted":
        return f"interrupted before any value of {name} was proven to fit"
    if record.value is None:
        return f"no value of {name} from {record.low} fits the budget"
    over = [t.value for t in record.trials if not t.fits and t.value > record.value]
    where = {
        "boundary": f"{name}={record.value + 1} does not",
        "tolerance": f"{name}={min(over, default=record.value + 1)} does not: within "
        f"{percent(record.tolerance)}",
        "maximum fits": "the largest value allowed (--max)",
        "too large": "the search stopped growing",
        "interrupted": "interrupted: the largest value proven to fit so far",
    }.get(record.reason, record.reason)
    return f"{name} = {record.value}  ({where})"


def fit_report(record: FitRecord) -> Report:
    sections = [("answer", _answer(record)), ("trials", _trials(record))]
    if record.non_monotonic:
        sections.append(("monotonic", _not_monotonic(record)))
    return Report(Heading(f"memgauge fit: {answer(record)}", level=3), tuple(sections))


def _answer(record: FitRecord) -> Section:
    search = len(record.trials)
    runs = f"runs: {record.runs} ({search} search, {record.runs - search} verification)"
    if record.start is not None:
        runs += f"; started at {record.start} ({record.start_from})"
    v = record.verification
    failed = record.value is not None and v is not None and not v.verified
    blocks = [
        sentence(f"budget: {budget_text(record)}"),
        sentence(runs),
        sentence(verification_text(record), "bad" if failed else ""),
    ]
    blocks += [sentence(f"law of {LABELS.get(m, m)}: {law}") for m, law in record.laws.items()]
    return Section(answer(record), tuple(blocks))


def _trials(record: FitRecord) -> Section:
    metrics = list(record.budget)
    columns = (
        Column(record.parameter),
        *(Column(LABELS.get(m, m)) for m in metrics),
        Column("result", role="words"),
    )
    rows = tuple(
        (
            str(t.value),
            *(figure(m, t.figures.get(m)) for m in metrics),
            "fits" if t.fits else (f"failed: {t.error}" if t.error else "over " + ", ".join(t.over)),
        )
        for t in sorted(record.trials, key=lambda t: t.value)
    )
    return Section(TRIALS, (Table(TRIALS, columns, rows),))


def _not_monotonic(record: FitRecord) -> Section:
    name = record.parameter
    lines = []
    for n in record.non_monotonic:
        if n.metric == "fits":
            text = f"{name}={n.value} fits although {name}={n.below} did not"
        else:
            text = (
                f"{name}={n.value}: {LABELS.get(n.metric, n.metric)} {figure(n.metric, n.figure)}, "
                f"below {figure(n.metric, n.below_figure)} at {name}={n.below}"
            )
        lines.append(Line(((Span(text),),), lead="  ", item=True))
    return Section(NOT_MONOTONIC, (Heading(NOT_MONOTONIC), *lines))
