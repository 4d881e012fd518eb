"""The wording every sweep report shares (terminal, HTML): how a metric is named, how its figures
and a parameter's values read, how a fitted law is written."""

from __future__ import annotations

import math
import re

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import Fit
from memgauge.model import Value
from memgauge.render._format import DASH, MISSING, format_number

KNEE_NOTE = "← knee: adding workers beyond this stops paying"


def metric_label(metric: str) -> str:
    """``rss`` -> "memory" (the run's one memory figure, what a container needs: ``RunSummary``),
    ``phase:load.peak`` -> "phase load: peak", ``metric:items`` -> "items", ``throughput:items``
    -> "items/s"."""
    fixed = {"rss": "memory", "wall": "wall time", "cpu": "CPU time"}
    if metric in fixed:
        return fixed[metric]
    kind, _, rest = metric.partition(":")
    if kind == "phase":
        name, _, what = rest.rpartition(".")
        return f"phase {name}: {'peak' if what == 'peak' else 'time' if what == 'seconds' else what}"
    if kind == "metric":
        return rest
    if kind == "throughput":
        return f"{rest}/s"
    return metric


def metric_unit(metric: str) -> str:
    """How the metric's figures read: "bytes", "seconds", "rate" (per second) or "number"."""
    if metric == "rss" or (metric.startswith("phase:") and metric.endswith(".peak")):
        return "bytes"
    if metric in ("wall", "cpu") or (metric.startswith("phase:") and metric.endswith(".seconds")):
        return "seconds"
    if metric.startswith("throughput:"):
        return "rate"
    return "number"


def format_metric(metric: str, value: float | None) -> str:
    if value is None:
        return MISSING
    if not math.isfinite(value):
        return format_number(value)
    unit = metric_unit(metric)
    if unit == "bytes":
        return format_bytes(value)
    if unit == "seconds":
        return format_seconds(value)
    if unit == "rate":
        return format_number(float(f"{value:.3g}")) + "/s"
    return format_number(value)


def format_range(metric: str, low: float, high: float) -> str:
    """``"1.1\u20131.3 GiB"``: the unit once where both ends have it; ``"unbounded"`` for an
    interval that too few runs leave open."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return "unbounded"
    lo, hi = format_metric(metric, low), format_metric(metric, high)
    lo_num, _, lo_unit = lo.partition(" ")
    hi_num, _, hi_unit = hi.partition(" ")
    if lo_unit and lo_unit == hi_unit:
        return f"{lo_num}{DASH}{hi_num} {hi_unit}"
    return f"{lo}{DASH}{hi}"


def format_value(value: Value) -> str:
    """A parameter's value as the user gave it (``1000``, ``0.5``, ``mlp``)."""
    return repr(value) if isinstance(value, float) else str(value)


def format_size(value: float) -> str:
    """A size found by the analysis, thousands separated: ``1,234,000``."""
    return format_number(value)


def fixed_text(fixed: dict[str, Value]) -> str:
    """Parameters and their values: ``MODEL=mlp N=1000``."""
    return " ".join(f"{k}={format_value(v)}" for k, v in fixed.items())


def formula(fit: Fit, param: str) -> str:
    """``Fit.formula()`` in the size's own name: it always writes N ("1.2e+07 + 1049·WORKERS")."""
    return re.sub(r"\bN\b", lambda _: param, fit.formula())
