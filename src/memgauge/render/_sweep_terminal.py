"""The terminal report of ``memgauge sweep``, and the wording every sweep report shares.

Each section is a borderless table like the run report's (``_terminal``): figures are never cut
or wrapped, so where a table does not fit the width its least useful columns go first, and only
text (metric names, reasons) wraps, between words. Every string that comes from the record (a
parameter value, a phase name, the command) is a ``Text``, never rich markup: a value such as
``[bold]x`` is shown as typed.
"""

from __future__ import annotations

import io
import math
import re
import shlex
from collections.abc import Sequence

from rich.console import Console, JustifyMethod
from rich.table import Column, Table
from rich.text import Text

from memgauge._units import format_bytes, format_seconds
from memgauge.analysis import (
    BudgetRow,
    Fit,
    Growth,
    GrowthRow,
    PhaseShares,
    Prediction,
    ScalingRow,
    SweepAnalysis,
    is_numeric,
)
from memgauge.model import Point, SweepResult, Value
from memgauge.render._terminal import _content_width, _wrapped, remove_column
from memgauge.render._text import text_console

# the narrowest a wrapped text column is allowed before figures are left out instead, unless a
# word of it is longer (up to _MAX_WORD: a longer word is folded)
_MIN_TEXT = 10
_MAX_WORD = 24
# an en dash between the ends of a range ("1.1 to 1.3 GiB"): a hyphen would read as a minus sign
DASH = "\u2013"
KNEE_NOTE = "← knee: adding workers beyond this stops paying"

# -- wording shared by the sweep reports (terminal, HTML) ------------------------------------------


def metric_label(metric: str) -> str:
    """``rss`` -> "resident peak", ``phase:load.peak`` -> "phase load: peak", ``metric:items`` ->
    "items", ``throughput:items`` -> "items/s"."""
    fixed = {"rss": "resident peak", "wall": "wall time", "cpu": "CPU time"}
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


def format_number(value: float) -> str:
    """A program's own figure: whole numbers with thousands separators, others to 4 digits."""
    if not math.isfinite(value):
        return "∞" if value > 0 else "-∞" if value < 0 else "—"
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    if abs(value) >= 1000 and abs(value) < 1e15:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def format_metric(metric: str, value: float | None) -> str:
    if value is None:
        return "—"
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
    return " ".join(f"{k}={format_value(v)}" for k, v in fixed.items())


def point_text(params: dict[str, Value]) -> str:
    return fixed_text(params)


def top_phases(result: SweepResult) -> list[str]:
    """The outermost phases' names, in the order the runs first show them."""
    names: dict[str, None] = {}
    for point in result.points:
        for run in point.runs:
            names.update(dict.fromkeys(n for n, ph in run.phases.items() if ph.depth == 0))
    return list(names)


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


def formula(fit: Fit, param: str) -> str:
    """``Fit.formula()`` in the size's own name: it always writes N ("1.2e+07 + 1049·WORKERS")."""
    return re.sub(r"\bN\b", lambda _: param, fit.formula())


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


def percent(fraction: float) -> str:
    value = 100 * fraction
    if 0 < abs(value) < 0.01:
        return "<0.01%"
    return f"{value:.0f}%" if abs(value) >= 10 or value == 0 else f"{value:.2g}%"


def points_measured(result: SweepResult) -> tuple[int, int]:
    total = 1
    for values in result.params.values():
        total *= len(values)
    return sum(1 for p in result.points if p.runs), total


def _narrowest(column: Column) -> int:
    """How narrow a text column can be without folding a word (or _MIN_TEXT, if more)."""
    words = [len(w) for c in [column.header, *column.cells] for w in str(c).split()]
    return min(_content_width(column), max(_MIN_TEXT, min(max(words, default=0), _MAX_WORD)))


# -- the terminal report -----------------------------------------------------------------------------


class TerminalSweepRenderer:
    def __init__(self, *, width: int = 100, color: bool = False, max_rows: int = 200) -> None:
        self.width = width
        self.color = color
        self.max_rows = max_rows

    def render(self, analysis: SweepAnalysis) -> str:
        buf = io.StringIO()
        console = text_console(buf, self.width, self.color)
        a = analysis
        self._header(console, a.result)
        self._points(console, a.result)
        self._phases(console, a.result)
        self._laws(console, a.laws)
        self._predictions(console, a)
        self._budget(console, a)
        self._confirmations(console, a.result)
        for shares in a.shares:
            self._shares(console, shares)
        for row in a.scaling:
            self._scaling(console, row)
        for note in a.notes:
            console.print(Text(f"note: {note}", style="yellow"))
        # rich pads a table's rows to its width: spaces nobody sees, that a diff or a pager shows
        return "\n".join(line.rstrip(" ") for line in buf.getvalue().split("\n"))

    # -- layout -----------------------------------------------------------------------------------

    def _titled(self, console: Console, title: str | Text) -> Table:
        """Print ``title``, and return a borderless table to go under it. The title is a line of
        its own, not the table's: a table as wide as its title would spread short figures apart,
        and a title as narrow as its table would wrap."""
        heading = Text(title) if isinstance(title, str) else title
        heading.stylize("bold")
        console.print(heading)
        return Table(box=None, pad_edge=False, header_style="bold")

    @staticmethod
    def _figure(table: Table, header: str | Text, justify: JustifyMethod = "right") -> Column:
        table.add_column(header, justify=justify, no_wrap=True)
        return table.columns[-1]

    @staticmethod
    def _words(table: Table, header: str | Text) -> Column:
        # text wraps between words; a word longer than its column is folded, never lost
        table.add_column(header, overflow="fold")
        return table.columns[-1]

    def _fit(self, table: Table, optional: Sequence[Column] = ()) -> Table:
        """Leave out the ``optional`` columns, in order, while the figures at their full width and
        the text columns at their narrowest do not fit; then share what the figures leave among
        the text columns. rich would instead crop the last columns mid-figure, or fold a short
        word ("MODEL=linear") while another column has room to spare."""

        def needed(left_out: list[Column]) -> int:
            widths = [
                _content_width(c) if c.no_wrap else _narrowest(c) for c in table.columns if c not in left_out
            ]
            return sum(widths) + 2 * (len(widths) - 1)

        dropped: list[Column] = []
        for column in optional:
            if needed(dropped) <= self.width:
                break
            if column in table.columns and len(dropped) < len(table.columns) - 1:
                dropped.append(column)
        # the last one left out may have made room for one left out before it
        for column in dropped[-2::-1]:
            if needed([c for c in dropped if c is not column]) <= self.width:
                dropped.remove(column)
        for column in dropped:
            remove_column(table, column)
        texts = [c for c in table.columns if not c.no_wrap]
        for column in table.columns:
            if column.no_wrap:
                column.min_width = _content_width(column)
        room = self.width - sum(_content_width(c) for c in table.columns if c.no_wrap)
        room -= 2 * (len(table.columns) - 1)
        natural = [_content_width(c) for c in texts]
        if sum(natural) <= room:
            return table
        floors = [_narrowest(c) for c in texts]
        spare = max(0, room - sum(floors))
        slack = sum(n - f for n, f in zip(natural, floors, strict=True)) or 1
        for column, n, f in zip(texts, natural, floors, strict=True):
            column.max_width = f + (n - f) * spare // slack
        return table

    def _param_column(self, table: Table, result: SweepResult, name: str) -> Column:
        if is_numeric(result.params[name]):
            return self._figure(table, Text(name))
        return self._words(table, Text(name))

    def _more(self, console: Console, shown: int, total: int) -> None:
        if total > shown:
            console.print(Text(f"  … {total - shown} more rows not shown", style="dim"))

    # -- sections ---------------------------------------------------------------------------------

    def _header(self, console: Console, r: SweepResult) -> None:
        title = Text("memgauge sweep ", style="bold")
        title.append(shlex.join(r.command), style="cyan")
        console.print(title)
        measured, total = points_measured(r)
        engine = f"engine {r.engine}" + (f" (concurrency {r.concurrency})" if r.concurrency else "")
        parts = [
            Text(engine + " ·"),
            Text(f"repeat {r.repeat} ·"),
            Text(f"{measured} of {total} points measured ·"),
            Text("complete", style="green") if r.complete else Text("interrupted", style="bold red"),
        ]
        console.print(_wrapped(parts, self.width))
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
            console.print(_wrapped(line, self.width))

    def _points(self, console: Console, r: SweepResult) -> None:
        if not r.points:
            return
        varied = r.varied() or list(r.params)
        metrics = sorted({m for p in r.points for run in p.runs for m in run.metrics})
        runs = f", medians of {r.repeat} runs" if r.repeat > 1 else ""
        table = self._titled(console, Text(f"points ({len(r.points)}{runs})"))
        for name in varied:
            self._param_column(table, r, name)
        self._figure(table, "peak")
        spread = self._figure(table, f"peak min{DASH}max") if r.repeat > 1 else None
        self._figure(table, "wall")
        cpu = self._figure(table, "CPU")
        self._words(table, "exit")
        extra = [self._figure(table, Text(m)) for m in metrics]
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
            table.add_row(*cells)
        optional = [c for c in (spread, cpu) if c is not None] + extra[::-1]
        console.print(self._fit(table, optional))
        self._more(console, len(shown), len(r.points))
        self._failures(console, r)

    def _failures(self, console: Console, r: SweepResult, most: int = 5) -> None:
        """The last line a failed run printed (where its traceback ends): the record keeps the end
        of its output for this, and "exit 1" alone does not say why."""
        failed = [
            (p, i, run)
            for p in r.points
            for i, run in enumerate(p.runs, 1)
            if not run.ok and run.output_tail.strip()
        ]
        for p, i, run in failed[:most]:
            last = [line.strip() for line in run.output_tail.splitlines() if line.strip()][-1]
            which = f" run {i}" if r.repeat > 1 else ""
            line = f"  {point_text(p.params)}{which} ({run.exit}): {last}"
            if len(line) > self.width:  # one line per run: a program's long line is cut
                line = line[: self.width - 1] + "…"
            console.print(Text(line, style="red"), no_wrap=True, overflow="ignore")
        self._more(console, min(len(failed), most), len(failed))

    def _phases(self, console: Console, r: SweepResult) -> None:
        names = top_phases(r)
        if not names:
            return
        varied = r.varied() or list(r.params)
        table = self._titled(console, Text("phases (medians: peak / time)"))
        for name in varied:
            self._param_column(table, r, name)
        columns = [self._figure(table, Text(f"{name} peak / time")) for name in names]
        shown = r.points[: self.max_rows]
        for p in shown:
            cells = [Text(format_value(p.params[n])) if n in p.params else Text("—") for n in varied]
            for name in names:
                peak, seconds = p.median(f"phase:{name}.peak"), p.median(f"phase:{name}.seconds")
                if peak is None or seconds is None:
                    cells.append(Text("—"))
                else:
                    cells.append(Text(f"{format_bytes(peak)} / {format_seconds(seconds)}"))
            table.add_row(*cells)
        self._fit(table, columns[:0:-1])
        console.print(table)
        self._more(console, len(shown), len(r.points))
        left = [name for name, c in zip(names, columns, strict=True) if c not in table.columns]
        if left:
            console.print(Text(f"  left out to fit the width: {', '.join(left)}", style="dim"))

    def _laws(self, console: Console, rows: Sequence[GrowthRow]) -> None:
        if not rows:
            return
        with_fixed = any(row.fixed for row in rows)
        params = list(dict.fromkeys(row.param for row in rows))
        # one size: named in the title, not on every row
        against = f" vs {params[0]}" if len(params) == 1 else ""
        table = self._titled(console, Text(f"growth laws{against} (fitted to every run)"))
        self._words(table, "metric")
        if not against:
            self._figure(table, "vs")
        fixed_col = self._words(table, "with") if with_fixed else None
        self._figure(table, "law")
        fit_col = self._figure(table, "fit", "left")
        r2 = self._figure(table, "R²")
        rms = self._figure(table, "RMS error")
        second = self._figure(table, "runner-up (ΔAICc)")
        for row in rows[: self.max_rows]:
            cells = [Text(metric_label(row.metric))] + ([] if against else [Text(row.param)])
            if with_fixed:
                cells.append(Text(fixed_text(row.fixed)))
            g = row.growth
            if g is None:
                cells += [Text("—"), Text(f"too few runs ({row.observations})", style="dim")]
                cells += [Text(""), Text(""), Text("")]
            else:
                best = g.best
                other = runner_up(g)
                if other is None:
                    up = "—"
                elif math.isfinite(other[1]):
                    up = f"{other[0].law} ({other[1]:+.1f})"
                else:
                    up = f"{other[0].law} (not compared)"
                cells += [
                    Text(best.law, style="bold"),
                    Text(formula(best, row.param)),
                    Text(f"{best.r2:.4f}" if best.law != "constant" else "—"),
                    Text(percent(best.rms_relative)),
                    Text(up),
                ]
            table.add_row(*cells)
        # the law's name says most; its coefficients, then the evidence for it, go first
        optional = [second, rms, r2, fit_col] + ([fixed_col] if fixed_col is not None else [])
        console.print(self._fit(table, optional))
        self._more(console, min(len(rows), self.max_rows), len(rows))
        criteria = list(dict.fromkeys(row.growth.criterion for row in rows if row.growth is not None))
        for text in criteria:
            console.print(Text(text, style="dim"))

    def _predictions(self, console: Console, a: SweepAnalysis) -> None:
        rows = a.predictions
        if not rows:
            return
        param, target = rows[0].param, rows[0].target
        table = self._titled(console, Text(f"predictions at {param}={format_size(target)} (95% interval)"))
        self._words(table, "metric")
        with_fixed = any(row.fixed for row in rows)
        if with_fixed:
            self._words(table, "with")
        self._figure(table, "predicted")
        self._figure(table, "interval")
        self._words(table, "")
        for row in rows[: self.max_rows]:
            cells = [Text(metric_label(row.metric))]
            if with_fixed:
                cells.append(Text(fixed_text(row.fixed)))
            p: Prediction | None = row.prediction
            if p is None:
                cells += [Text("—"), Text("—"), Text(f"no prediction: {row.reason}", style="yellow")]
            elif p.supported:
                cells += [
                    Text(format_metric(row.metric, p.value), style="bold"),
                    Text(format_range(row.metric, p.low, p.high)),
                    Text("ok", style="green"),
                ]
            else:
                # the figure stays, in parentheses and dim: the reader sees it is not to be trusted
                cells += [
                    Text(f"({format_metric(row.metric, p.value)})", style="dim"),
                    Text(f"({format_range(row.metric, p.low, p.high)})", style="dim"),
                    Text(f"not supported: {p.reason}", style="yellow"),
                ]
            table.add_row(*cells)
        console.print(self._fit(table))
        self._more(console, min(len(rows), self.max_rows), len(rows))

    def _budget(self, console: Console, a: SweepAnalysis) -> None:
        rows = a.budget
        if not rows:
            return
        several = len({row.limit_text for row in rows}) > 1
        table = self._titled(console, Text(f"largest {rows[0].param} within the budget"))
        self._words(table, "limit")
        with_fixed = any(row.fixed for row in rows)
        if with_fixed:
            self._words(table, "with")
        self._figure(table, "largest")
        predicted = self._figure(table, "predicted")
        high = self._figure(table, "high bound")
        margin = self._figure(table, "of limit")
        notes: list[Text] = []
        for row in rows[: self.max_rows]:
            why = row.reason or ""
            if several and row in a.binding:
                why = "binding" + (f"; {why}" if why else "")
            notes.append(Text(why, style="yellow" if row.status != "fits" else ""))
        # an empty column would take the width a figure could have
        with_notes = any(n.plain for n in notes)
        if with_notes:
            self._words(table, "note")
        for row, note in zip(rows, notes, strict=False):
            cells = [Text(row.limit_text)]
            if with_fixed:
                cells.append(Text(fixed_text(row.fixed)))
            cells += self._budget_cells(row)
            table.add_row(*cells, *([note] if with_notes else []))
        console.print(self._fit(table, [margin, high, predicted]))
        self._more(console, min(len(rows), self.max_rows), len(rows))

    @staticmethod
    def _budget_cells(row: BudgetRow) -> list[Text]:
        if row.status == "none":
            return [Text("none fits", style="bold red"), Text(""), Text(""), Text("")]
        if row.status != "fits" or row.largest is None:
            return [Text("unknown", style="yellow"), Text(""), Text(""), Text("")]
        p = row.prediction
        used = row.margin_used
        return [
            Text(f"{row.param} = {format_size(row.largest)}", style="bold"),
            Text(format_metric(row.metric, p.value if p else None)),
            Text(format_metric(row.metric, p.high if p else None)),
            Text(percent(used) if used is not None else "—"),
        ]

    def _confirmations(self, console: Console, r: SweepResult) -> None:
        if not r.confirmations:
            return
        table = self._titled(console, Text("confirmation runs"))
        self._words(table, "at")
        self._words(table, "metric")
        predicted = self._figure(table, "predicted")
        self._figure(table, "measured")
        self._figure(table, "limit")
        # the share tells a run 2% over from one at the limit when both read "1.0 GiB"
        self._figure(table, "of limit")
        self._figure(table, "")
        for c in r.confirmations:
            fits = c.fits
            verdict = (
                Text("not measured", style="yellow")
                if fits is None
                else Text("fits", style="green")
                if fits
                else Text("OVER", style="bold red")
            )
            table.add_row(
                Text(point_text(c.params)),
                Text(metric_label(c.metric)),
                Text(format_metric(c.metric, c.predicted)),
                Text(format_metric(c.metric, c.measured)),
                Text(format_metric(c.metric, c.limit)),
                Text(percent(c.measured / c.limit) if c.measured is not None and c.limit > 0 else "—"),
                verdict,
            )
        console.print(self._fit(table, [predicted]))

    def _shares(self, console: Console, s: PhaseShares) -> None:
        where = f" ({fixed_text(s.fixed)})" if s.fixed else ""
        table = self._titled(console, Text(f"share of wall time by phase, vs {s.param}{where}"))
        self._figure(table, Text(s.param))
        columns = [self._figure(table, Text(name)) for name in s.phases]
        self._figure(table, "other")
        for x, row, other in share_rows(s):
            table.add_row(Text(format_value(x)), *(Text(percent(v)) for v in row), Text(percent(other)))
        self._fit(table, columns[:0:-1])
        console.print(table)

    def _scaling(self, console: Console, row: ScalingRow) -> None:
        sc = row.scaling
        where = f" ({fixed_text(row.fixed)})" if row.fixed else ""
        table = self._titled(console, Text(f"worker scaling: {row.metric} per second vs {row.param}{where}"))
        self._figure(table, Text(row.param))
        self._figure(table, "throughput")
        self._figure(table, "speedup")
        efficiency = self._figure(table, "efficiency")
        self._words(table, "")
        for p in sc.points:
            knee = sc.knee is not None and p.workers == sc.knee
            table.add_row(
                Text(format_number(p.workers), style="bold" if knee else ""),
                Text(format_metric(f"throughput:{row.metric}", p.throughput)),
                Text(f"{p.speedup:.2f}x"),
                Text(percent(p.efficiency)),
                Text(KNEE_NOTE, style="yellow") if knee else Text(""),
            )
        console.print(self._fit(table, [efficiency]))
        if sc.knee is None and sc.points:
            console.print(
                Text("no knee: adding workers still paid at the largest count measured", style="dim")
            )
        console.print(Text(sc.criterion, style="dim"))
