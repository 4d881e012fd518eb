"""What the text renderers (terminal, markdown, comparisons) share."""

from __future__ import annotations

import io

from rich.console import Console

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import top_lines
from memgauge.model import Profile

CPU_FIGURES = ["cpu", "python", "native", "wait", "memory"]

# (figures, pid, file, line, source, function): the function only where two rows share a line
CpuRow = tuple[list[str], int, str, int, str, str]


def cpu_rows(profile: Profile, n: int) -> list[CpuRow]:
    """The ``n`` lines with most CPU time, with their figures formatted as ``CPU_FIGURES``. A line
    with two rows (a comprehension and the function around it) shows their function names."""
    rows = top_lines(profile, n, by="cpu")
    places = [(row.stats.pid, row.stats.file, row.stats.line) for row in rows]
    out: list[CpuRow] = []
    for row in rows:
        s = row.stats
        shared = places.count((s.pid, s.file, s.line)) > 1
        figures = [
            format_seconds(s.cpu_python_seconds + s.cpu_native_seconds),
            f"{row.python_share:.0%}",
            f"{row.native_share:.0%}",
            f"{row.wait_share:.0%}",
            format_bytes(s.resident_growth_bytes, signed=True),
        ]
        out.append((figures, s.pid, s.file, s.line, s.source, s.function if shared else ""))
    return out


def text_console(buf: io.StringIO, width: int, color: bool) -> Console:
    """A console writing into ``buf``: fixed width, colour only when asked, no guessing."""
    return Console(
        file=buf, width=width, force_terminal=color, no_color=not color, highlight=False, soft_wrap=False
    )
