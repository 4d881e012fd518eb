"""The tables of the terminal report of ``memgauge sweep`` about the fits: the growth laws, the
predictions, the largest size within the budget and the confirmation runs; with what every table
of the report shares (a title on a line of its own, a note of the rows not shown)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from memgauge.analysis import BudgetRow, GrowthRow, Prediction, SweepAnalysis, limit_share, runner_up
from memgauge.model import SweepResult
from memgauge.render._format import percent
from memgauge.render._layout import Layout
from memgauge.render._sweep_words import (
    fixed_text,
    format_metric,
    format_range,
    format_size,
    formula,
    metric_label,
)


class SweepTables:
    """The base of ``TerminalSweepRenderer``: its layout helpers and its fit tables."""

    width: int
    color: bool
    max_rows: int

    def _titled(self, out: Console, title: str | Text) -> Layout:
        """Print ``title``, and return a table to go under it. The title is a line of its own, not
        the table's: a table as wide as its title would spread short figures apart, and a title
        as narrow as its table would wrap."""
        heading = Text(title) if isinstance(title, str) else title
        heading.stylize("bold")
        out.print(heading)
        return Layout(self.width)

    def _more(self, out: Console, shown: int, total: int) -> None:
        if total > shown:
            out.print(Text(f"  … {total - shown} more rows not shown", style="dim"))

    # -- the fits ---------------------------------------------------------------------------------

    def _laws(self, out: Console, rows: Sequence[GrowthRow]) -> None:
        if not rows:
            return
        with_fixed = any(row.fixed for row in rows)
        params = list(dict.fromkeys(row.param for row in rows))
        # one size: named in the title, not on every row
        against = f" vs {params[0]}" if len(params) == 1 else ""
        layout = self._titled(out, Text(f"growth laws{against} (fitted to every run)"))
        layout.words("metric")
        if not against:
            layout.figure("vs")
        fixed_col = layout.words("with") if with_fixed else None
        layout.figure("law")
        fit_col = layout.figure("fit", "left")
        r2 = layout.figure("R²")
        rms = layout.figure("RMS error")
        second = layout.figure("runner-up (ΔAICc)")
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
            layout.add_row(*cells)
        # the law's name says most; its coefficients, then the evidence for it, go first
        optional = [second, rms, r2, fit_col] + ([fixed_col] if fixed_col is not None else [])
        out.print(layout.fit(optional, second_chance=True))
        self._more(out, min(len(rows), self.max_rows), len(rows))
        criteria = list(dict.fromkeys(row.growth.criterion for row in rows if row.growth is not None))
        for text in criteria:
            out.print(Text(text, style="dim"))

    def _predictions(self, out: Console, a: SweepAnalysis) -> None:
        rows = a.predictions
        if not rows:
            return
        param, target = rows[0].param, rows[0].target
        layout = self._titled(out, Text(f"predictions at {param}={format_size(target)} (95% interval)"))
        layout.words("metric")
        with_fixed = any(row.fixed for row in rows)
        if with_fixed:
            layout.words("with")
        layout.figure("predicted")
        layout.figure("interval")
        layout.words("")
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
            layout.add_row(*cells)
        out.print(layout.fit(second_chance=True))
        self._more(out, min(len(rows), self.max_rows), len(rows))

    def _budget(self, out: Console, a: SweepAnalysis) -> None:
        rows = a.budget
        if not rows:
            return
        several = len({row.limit_text for row in rows}) > 1
        layout = self._titled(out, Text(f"largest {rows[0].param} within the budget"))
        layout.words("limit")
        with_fixed = any(row.fixed for row in rows)
        if with_fixed:
            layout.words("with")
        layout.figure("largest")
        predicted = layout.figure("predicted")
        high = layout.figure("high bound")
        margin = layout.figure("of limit")
        notes: list[Text] = []
        for row in rows[: self.max_rows]:
            why = row.reason or ""
            if several and row in a.binding:
                why = "binding" + (f"; {why}" if why else "")
            notes.append(Text(why, style="yellow" if row.status != "fits" else ""))
        # an empty column would take the width a figure could have
        with_notes = any(n.plain for n in notes)
        if with_notes:
            layout.words("note")
        for row, note in zip(rows, notes, strict=False):
            cells = [Text(row.limit_text)]
            if with_fixed:
                cells.append(Text(fixed_text(row.fixed)))
            cells += self._budget_cells(row)
            layout.add_row(*cells, *([note] if with_notes else []))
        out.print(layout.fit([margin, high, predicted], second_chance=True))
        self._more(out, min(len(rows), self.max_rows), len(rows))

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

    def _confirmations(self, out: Console, r: SweepResult) -> None:
        if not r.confirmations:
            return
        layout = self._titled(out, Text("confirmation runs"))
        layout.words("at")
        layout.words("metric")
        predicted = layout.figure("predicted")
        layout.figure("measured")
        layout.figure("limit")
        # the share tells a run 2% over from one at the limit when both read "1.0 GiB"
        layout.figure("of limit")
        layout.figure("")
        for c in r.confirmations:
            fits = c.fits
            verdict = (
                Text("not measured", style="yellow")
                if fits is None
                else Text("fits", style="green")
                if fits
                else Text("OVER", style="bold red")
            )
            layout.add_row(
                Text(fixed_text(c.params)),
                Text(metric_label(c.metric)),
                Text(format_metric(c.metric, c.predicted)),
                Text(format_metric(c.metric, c.measured)),
                Text(format_metric(c.metric, c.limit)),
                Text(percent(share) if (share := limit_share(c)) is not None else "—"),
                verdict,
            )
        out.print(layout.fit([predicted], second_chance=True))
