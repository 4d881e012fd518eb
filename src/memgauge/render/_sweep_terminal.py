"""The terminal report of ``memgauge sweep``.

Each section is a borderless table like the run report's (see ``_layout``): figures are never cut
or wrapped, so where a table does not fit the width its least useful columns go first, and only
text (metric names, reasons) wraps, between words. Every string that comes from the record (a
parameter value, a phase name, the command) is a ``Text``, never rich markup: a value such as
``[bold]x`` is shown as typed.
"""

from __future__ import annotations

import io
import shlex

from rich.console import Console
from rich.table import Column
from rich.text import Text

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import (
    PhaseShares,
    ScalingRow,
    SweepAnalysis,
    exit_summary,
    failed_runs,
    is_numeric,
    points_measured,
    run_metrics,
    share_rows,
    top_phases,
)
from memgauge.model import SweepResult
from memgauge.render._format import DASH, format_number, percent
from memgauge.render._layout import Layout, console, wrapped
from memgauge.render._sweep_terminal_fits import SweepTables
from memgauge.render._sweep_words import (
    KNEE_NOTE,
    fixed_text,
    format_metric,
    format_range,
    format_value,
)


class TerminalSweepRenderer(SweepTables):
    def __init__(self, *, width: int = 100, color: bool = False, max_rows: int = 200) -> None:
        self.width = width
        self.color = color
        self.max_rows = max_rows

    def render(self, analysis: SweepAnalysis) -> str:
        buf = io.StringIO()
        out = console(buf, self.width, self.color)
        a = analysis
        self._header(out, a.result)
        self._points(out, a.result)
        self._phases(out, a.result)
        self._laws(out, a.laws)
        self._predictions(out, a)
        self._budget(out, a)
        self._confirmations(out, a.result)
        for shares in a.shares:
            self._shares(out, shares)
        for row in a.scaling:
            self._scaling(out, row)
        for note in a.notes:
            out.print(Text(f"note: {note}", style="yellow"))
        # rich pads a table's rows to its width: spaces nobody sees, that a diff or a pager shows
        return "\n".join(line.rstrip(" ") for line in buf.getvalue().split("\n"))

    # -- layout ----------------------------------------------------------------------------------------

    @staticmethod
    def _param_column(layout: Layout, result: SweepResult, name: str) -> Column:
        if is_numeric(result.params[name]):
            return layout.figure(Text(name))
        return layout.words(Text(name))

    # -- sections ---------------------------------------------------------------------------------

    def _header(self, out: Console, r: SweepResult) -> None:
        title = Text("memgauge sweep ", style="bold")
        title.append(shlex.join(r.command), style="cyan")
        out.print(title)
        measured, total = points_measured(r)
        engine = f"engine {r.engine}" + (f" (concurrency {r.concurrency})" if r.concurrency else "")
        parts = [
            Text(engine + " ·"),
            Text(f"repeat {r.repeat} ·"),
            Text(f"{measured} of {total} points measured ·"),
            Text("complete", style="green") if r.complete else Text("interrupted", style="bold red"),
        ]
        out.print(wrapped(parts, self.width))
        varied = [f"{k} ({len(v)} values)" for k, v in r.params.items() if len(v) > 1]
        constant = [f"{k}={format_value(v[0])}" for k, v in r.params.items() if len(v) == 1]
        line: list[Text] = []
        if varied:
            line.append(Text("varied:", style="dim"))
            line += [Text(v + ("," if i < len(varied) - 1 else "")) for i, v in enumerate(varied)]
        if constant:
            if line:
                line[-1].append(" ·")
            line.append(Text("fixed:", style="dim"))
            line += [Text(c) for c in constant]
        if line:
            out.print(wrapped(line, self.width))

    def _points(self, out: Console, r: SweepResult) -> None:
        if not r.points:
            return
        varied = r.varied() or list(r.params)
        metrics = run_metrics(r)
        runs = f", medians of {r.repeat} runs" if r.repeat > 1 else ""
        layout = self._titled(out, Text(f"points ({len(r.points)}{runs})"))
        for name in varied:
            self._param_column(layout, r, name)
        layout.figure("peak")
        spread = layout.figure(f"peak min{DASH}max") if r.repeat > 1 else None
        layout.figure("wall")
        cpu = layout.figure("CPU")
        layout.words("exit")
        extra = [layout.figure(Text(m)) for m in metrics]
        shown = r.points[: self.max_rows]
        for p in shown:
            cells = [Text(format_value(p.params[n])) if n in p.params else Text("—") for n in varied]
            cells.append(Text(format_metric("rss", p.median("rss"))))
            if spread is not None:
                values = p.values("rss")
                cells.append(Text(format_range("rss", min(values), max(values)) if len(values) > 1 else ""))
            cells.append(Text(format_metric("wall", p.median("wall"))))
            cells.append(Text(format_metric("cpu", p.median("cpu"))))
            summary = exit_summary(p, r.repeat)
            cells.append(Text(summary, style="" if summary.startswith("ok") else "bold red"))
            cells += [Text(format_metric(f"metric:{m}", p.median(f"metric:{m}"))) for m in metrics]
            layout.add_row(*cells)
        optional = [c for c in (spread, cpu) if c is not None] + extra[::-1]
        out.print(layout.fit(optional, second_chance=True))
        self._more(out, len(shown), len(r.points))
        self._failures(out, r)

    def _failures(self, out: Console, r: SweepResult, most: int = 5) -> None:
        """The last line a failed run printed (where its traceback ends): the record keeps the end
        of its output for this, and "exit 1" alone does not say why."""
        failed = failed_runs(r)
        for p, i, run in failed[:most]:
            last = [line.strip() for line in run.output_tail.splitlines() if line.strip()][-1]
            which = f" run {i}" if r.repeat > 1 else ""
            line = f"  {fixed_text(p.params)}{which} ({run.exit}): {last}"
            if len(line) > self.width:  # one line per run: a program's long line is cut
                line = line[: self.width - 1] + "…"
            out.print(Text(line, style="red"), no_wrap=True, overflow="ignore")
        self._more(out, min(len(failed), most), len(failed))

    def _phases(self, out: Console, r: SweepResult) -> None:
        names = top_phases(r)
        if not names:
            return
        varied = r.varied() or list(r.params)
        layout = self._titled(out, Text("phases (medians: peak / time)"))
        for name in varied:
            self._param_column(layout, r, name)
        columns = [layout.figure(Text(f"{name} peak / time")) for name in names]
        shown = r.points[: self.max_rows]
        for p in shown:
            cells = [Text(format_value(p.params[n])) if n in p.params else Text("—") for n in varied]
            for name in names:
                peak, seconds = p.median(f"phase:{name}.peak"), p.median(f"phase:{name}.seconds")
                if peak is None or seconds is None:
                    cells.append(Text("—"))
                else:
                    cells.append(Text(f"{format_bytes(peak)} / {format_seconds(seconds)}"))
            layout.add_row(*cells)
        layout.fit(columns[:0:-1], second_chance=True)
        out.print(layout.table)
        self._more(out, len(shown), len(r.points))
        left = [
            name
            for name, c in zip(names, columns, strict=True)
            if all(c is not k for k in layout.table.columns)
        ]
        if left:
            out.print(Text(f"  left out to fit the width: {', '.join(left)}", style="dim"))

    def _shares(self, out: Console, s: PhaseShares) -> None:
        where = f" ({fixed_text(s.fixed)})" if s.fixed else ""
        layout = self._titled(out, Text(f"share of wall time by phase, vs {s.param}{where}"))
        layout.figure(Text(s.param))
        columns = [layout.figure(Text(name)) for name in s.phases]
        layout.figure("other")
        for x, row, other in share_rows(s):
            layout.add_row(Text(format_value(x)), *(Text(percent(v)) for v in row), Text(percent(other)))
        layout.fit(columns[:0:-1], second_chance=True)
        out.print(layout.table)

    def _scaling(self, out: Console, row: ScalingRow) -> None:
        sc = row.scaling
        where = f" ({fixed_text(row.fixed)})" if row.fixed else ""
        layout = self._titled(out, Text(f"worker scaling: {row.metric} per second vs {row.param}{where}"))
        layout.figure(Text(row.param))
        layout.figure("throughput")
        layout.figure("speedup")
        efficiency = layout.figure("efficiency")
        layout.words("")
        for p in sc.points:
            knee = sc.knee is not None and p.workers == sc.knee
            layout.add_row(
                Text(format_number(p.workers), style="bold" if knee else ""),
                Text(format_metric(f"throughput:{row.metric}", p.throughput)),
                Text(f"{p.speedup:.2f}x"),
                Text(percent(p.efficiency)),
                Text(KNEE_NOTE, style="yellow") if knee else Text(""),
            )
        out.print(layout.fit([efficiency], second_chance=True))
        if sc.knee is None and sc.points:
            out.print(Text("no knee: adding workers still paid at the largest count measured", style="dim"))
        out.print(Text(sc.criterion, style="dim"))
