"""The training figures as text, one way for every renderer (terminal, Markdown, HTML)."""

from __future__ import annotations

from memgauge._units import format_bytes, format_seconds
from memgauge.render import MISSING, format_number, percent
from memgauge.sections.training._analysis import TrainingFigure
from memgauge.sections.training._analysis_io import PhaseIo
from memgauge.sections.training._record import TrainingProcess

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
    if unit == "cores":  # CPU seconds per second
        return f"{value:.2f} cores"
    if unit == "bytes":
        return format_bytes(int(value))
    if unit == "byte_rate":
        return f"{format_bytes(int(value))}/s"
    return format_number(value)


def figure_text(f: TrainingFigure) -> str:
    return figure_value(f.value, f.unit)


def spread_text(f: TrainingFigure) -> str:
    """The per-step spread, "p10 to p90", or "" where there is none."""
    if f.spread is None:
        return ""
    return f"{figure_value(f.spread.p10, f.unit)} to {figure_value(f.spread.p90, f.unit)}"


def _per_second(rate: float | None) -> str:
    """A process's bytes per second over its lifetime, as " (1.2 MiB/s)"; "" where unknown."""
    return "" if rate is None else f" ({format_bytes(int(rate))}/s)"


def process_cells(p: TrainingProcess) -> list[str]:
    """A process row: what it is, its pid, CPU seconds and share, bytes read and written."""
    share = MISSING if p.cpu_share is None else percent(p.cpu_share)
    read = MISSING if p.rchar is None else format_bytes(p.rchar) + _per_second(p.read_per_second)
    written = MISSING if p.wchar is None else format_bytes(p.wchar) + _per_second(p.written_per_second)
    sent = MISSING if p.pickled_bytes is None else format_bytes(p.pickled_bytes + (p.shared_bytes or 0))
    return [p.role or p.command, str(p.pid), format_seconds(p.cpu_seconds), share, read, written, sent]


# "sent": to other processes through multiprocessing, pickled plus handed over in shared memory
PROCESS_HEADERS = ("process", "pid", "CPU", "CPU share", "read", "written", "sent")


PHASE_IO_HEADERS = ("phase", "pid", "time", "read", "written", "read from storage", "written to storage")


def phase_io_cells(p: PhaseIo) -> list[str]:
    """A phase's I/O row: bytes through read and write calls, with their rates, and to storage."""
    return [
        p.name,
        str(p.pid),
        format_seconds(p.seconds),
        format_bytes(p.rchar) + _per_second(p.read_per_second),
        format_bytes(p.wchar) + _per_second(p.written_per_second),
        format_bytes(p.read_bytes),
        format_bytes(p.write_bytes),
    ]
