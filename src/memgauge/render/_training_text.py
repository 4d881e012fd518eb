"""The training figures as text, one way for every renderer (terminal, Markdown, HTML)."""

from __future__ import annotations

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import TrainingFigure
from memgauge.model import TrainingProcess
from memgauge.render._format import MISSING, format_number, percent

_SI = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def si(value: float) -> str:
    """3 significant digits with an SI prefix: 9.66 G, 781 T."""
    for scale, prefix in _SI:
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}"
    return f"{value:.3g} "


def figure_value(value: float | None, unit: str) -> str:
    if value is None:
        return MISSING
    if unit == "share":
        return percent(value)
    if unit == "seconds":
        return format_seconds(value)
    if unit == "per_second":
        return f"{value:.3g}" if value < 1000 else format_number(round(value))
    if unit == "flops":
        return f"{si(value)}FLOP"
    if unit == "flop_rate":
        return f"{si(value)}FLOP/s"
    return format_number(value)


def figure_text(f: TrainingFigure) -> str:
    return figure_value(f.value, f.unit)


def spread_text(f: TrainingFigure) -> str:
    """The per-step spread, "p10 to p90", or "" where there is none."""
    if f.spread is None:
        return ""
    return f"{figure_value(f.spread.p10, f.unit)} to {figure_value(f.spread.p90, f.unit)}"


def process_cells(p: TrainingProcess) -> list[str]:
    """A process row: what it is, its pid, CPU seconds and share, bytes read and written."""
    share = MISSING if p.cpu_share is None else percent(p.cpu_share)
    read = MISSING if p.rchar is None else format_bytes(p.rchar)
    written = MISSING if p.wchar is None else format_bytes(p.wchar)
    return [p.role or p.command, str(p.pid), format_seconds(p.cpu_seconds), share, read, written]


PROCESS_HEADERS = ("process", "pid", "CPU", "CPU share", "read", "written")
