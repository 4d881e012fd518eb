"""The short report ``memgauge run`` prints on stderr."""

from __future__ import annotations

import io
import shlex

from rich.console import Console
from rich.table import Table
from rich.text import Text

from memgauge._profile import UNBOUNDED_NOTE, Profile
from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import phase_rows, sparkline, top_processes


def _exit_text(profile: Profile) -> Text:
    ex = profile.exit
    if ex.oom_killed:
        return Text("killed by the OOM killer", style="bold red")
    if ex.signal is not None:
        return Text(f"killed by {ex.signal_name}", style="bold red")
    if ex.code is None:
        return Text("in-process")
    return Text(f"exit {ex.code}", style="green" if ex.code == 0 else "bold red")


class TerminalRenderer:
    def __init__(self, width: int = 100, color: bool = False, max_processes: int = 5) -> None:
        self.width = width
        self.color = color
        self.max_processes = max_processes

    def render(self, profile: Profile) -> str:
        buf = io.StringIO()
        console = Console(
            file=buf,
            width=self.width,
            force_terminal=self.color,
            no_color=not self.color,
            highlight=False,
            soft_wrap=False,
        )
        self._header(console, profile)
        self._phases(console, profile)
        self._processes(console, profile)
        for note in profile.peak.notes:
            console.print(Text(f"note: {note}", style="yellow"))
        return buf.getvalue()

    def _header(self, console: Console, p: Profile) -> None:
        cpu = p.cpu.user_seconds + p.cpu.system_seconds
        title = Text("memgauge ", style="bold")
        title.append(shlex.join(p.command), style="cyan")
        console.print(title)
        line = _exit_text(p)
        line.append(
            f" · wall {format_seconds(p.wall_seconds)} · user {format_seconds(p.cpu.user_seconds)}"
            f" · system {format_seconds(p.cpu.system_seconds)}"
        )
        if p.wall_seconds > 0:
            line.append(f" · CPU {cpu / p.wall_seconds:.0%} of one core")
        console.print(line)
        peak = p.peak
        head = Text("resident peak ", style="bold")
        head.append(format_bytes(peak.resident_bytes), style="bold magenta")
        if UNBOUNDED_NOTE in peak.notes:
            head.append(" (a lower bound)")
        elif peak.error_bound_bytes:
            head.append(f" ±{format_bytes(peak.error_bound_bytes)}")
        else:
            head.append(" (exact)")
        if peak.at_seconds is not None:
            head.append(f" at {format_seconds(peak.at_seconds)}")
        console.print(head)
        how = f"  by {peak.method}" + (", page cache included" if peak.includes_page_cache else "")
        if len(p.processes) > 1 or peak.includes_page_cache:
            how += f"; largest process {format_bytes(peak.largest_process_bytes)}"
        console.print(how, style="dim")
        series = p.timeline.cgroup_bytes or p.timeline.tree_resident_bytes
        if series:
            spark = Text("memory ", style="bold")
            spark.append(sparkline(series, width=min(60, self.width - 30)), style="magenta")
            spark.append(
                f"  0 to {format_bytes(max(series))} over {format_seconds(p.wall_seconds)}", style="dim"
            )
            console.print(spark)

    def _phases(self, console: Console, p: Profile) -> None:
        rows = phase_rows(p)
        if not rows:
            return
        table = Table(title="phases", title_justify="left", box=None, pad_edge=False, header_style="bold")
        for name, justify in (
            ("phase", "left"),
            ("pid", "right"),
            ("start", "right"),
            ("duration", "right"),
            ("share", "right"),
            ("peak", "right"),
            ("growth", "right"),
        ):
            table.add_column(name, justify=justify)  # type: ignore[arg-type]
        for row in rows:
            ph = row.phase
            peak = format_bytes(ph.peak_resident_bytes) + ("" if ph.peak_exact else " ≥")
            name = "  " * ph.depth + ph.name + ("" if ph.complete else " (unfinished)")
            table.add_row(
                name,
                str(ph.pid),
                format_seconds(ph.start_seconds),
                format_seconds(ph.duration_seconds),
                f"{row.share:.0%}",
                peak,
                format_bytes(row.growth_bytes, signed=True),
            )
        console.print(table)

    def _processes(self, console: Console, p: Profile) -> None:
        if len(p.processes) <= 1:
            return
        shown = top_processes(p, self.max_processes)
        table = Table(
            title=f"processes ({len(shown)} of {len(p.processes)}, by peak)",
            title_justify="left",
            box=None,
            pad_edge=False,
            header_style="bold",
        )
        table.add_column("pid", justify="right", no_wrap=True, min_width=7)
        table.add_column("peak", justify="right", no_wrap=True, min_width=9)
        table.add_column("cpu", justify="right", no_wrap=True, min_width=8)
        table.add_column("command", no_wrap=True, overflow="ellipsis", ratio=1)
        for proc in shown:
            table.add_row(
                str(proc.pid),
                format_bytes(proc.peak_resident_bytes),
                format_seconds(proc.cpu_user_seconds + proc.cpu_system_seconds),
                shlex.join(proc.cmdline) if proc.cmdline else "(unknown)",
            )
        console.print(table)
