"""The report formats, in one table every command picks from: a format's name (as ``--format``
spells it), its file suffix, and its renderer for each kind of report it has (a profile, a
comparison, a sweep, a fit, a plan, a verdict). A command's ``--format`` choices are the formats
with a renderer for its kind (``format_option``), its ``--html`` writes the page's, and it renders
through ``need``: a new format, or a kind's new renderer, is one entry here.

Cheap to import: ``cli/_common`` loads it for every command, ``memgauge run`` before the program
starts; the renderers (rich, the page's assets) load when a report is drawn.
"""

from __future__ import annotations

import argparse

from memgauge._errors import UsageError

# for the type checker only: ``memgauge run`` reads its record's suffix here before the program
# starts, where typing, dataclasses and json would delay its first line (tests/integration/
# test_startup.py); so the classes below are plain ones, and json loads with a report
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Literal, TypeVar

    from memgauge.analysis import Comparison, SweepAnalysis
    from memgauge.gate import Verdict
    from memgauge.model import FitRecord, PlanRecord, Profile

    Kind = Literal["profile", "comparison", "sweep", "fit", "plan", "verdict"]
    T = TypeVar("T")

KINDS = ("profile", "comparison", "sweep", "fit", "plan", "verdict")


class Look:
    """How a text report is drawn: the terminal's width and colours, and the lines per table
    (None: the report's own default)."""

    def __init__(self, width: int = 100, color: bool = False, lines: int | None = None) -> None:
        self.width = width
        self.color = color
        self.lines = lines


class Judged:
    """What ``check`` reports: the verdict, the runs it judged, and their benchmark's name."""

    def __init__(self, verdict: Verdict, runs: list[Profile], name: str) -> None:
        self.verdict = verdict
        self.runs = runs
        self.name = name


class Format:
    """A format: its name, its file's suffix, and its renderer of each kind of report it has;
    ``page``: a file of its own (``--html PATH``), never printed, so not a ``--format`` choice."""

    def __init__(
        self,
        name: str,
        suffix: str,
        *,
        page: bool = False,
        profile: Callable[[Profile, Look], str] | None = None,
        comparison: Callable[[Comparison, Look], str] | None = None,
        sweep: Callable[[SweepAnalysis, Look], str] | None = None,
        fit: Callable[[FitRecord, Look], str] | None = None,
        plan: Callable[[PlanRecord, Look], str] | None = None,
        verdict: Callable[[Judged, Look], str] | None = None,
        loads: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.suffix = suffix
        self.page = page
        # the modules its profile renderer imports: ``memgauge run`` loads them while the program
        # runs (``RunOptions.prewarm``), not after it, where rich alone adds ~30 ms to the run
        self.loads = loads
        self.profile = profile
        self.comparison = comparison
        self.sweep = sweep
        self.fit = fit
        self.plan = plan
        self.verdict = verdict

    def has(self, kind: Kind) -> bool:
        renderer: object = getattr(self, kind)
        return renderer is not None


def _lines(look: Look) -> dict[str, Any]:
    return {} if look.lines is None else {"max_lines": look.lines}


# -- the renderers, each importing its module when a report is drawn --------------------------------


def _terminal_profile(p: Profile, look: Look) -> str:
    from memgauge.render import TerminalRenderer

    return TerminalRenderer(width=look.width, color=look.color, **_lines(look)).render(p)


def _markdown_profile(p: Profile, look: Look) -> str:
    from memgauge.render import MarkdownRenderer

    return MarkdownRenderer(**_lines(look)).render(p)


def _json_profile(p: Profile, look: Look) -> str:
    from memgauge.render import JsonRenderer

    return JsonRenderer().render(p)


def _html_profile(p: Profile, look: Look) -> str:
    from memgauge.render import HtmlRenderer

    return HtmlRenderer().render(p)


def _terminal_comparison(c: Comparison, look: Look) -> str:
    from memgauge.render import TerminalComparisonRenderer

    return TerminalComparisonRenderer(width=look.width, color=look.color).render(c)


def _markdown_comparison(c: Comparison, look: Look) -> str:
    from memgauge.render import MarkdownComparisonRenderer

    return MarkdownComparisonRenderer().render(c)


def _json_comparison(c: Comparison, look: Look) -> str:
    import json

    return json.dumps(c.to_dict(), indent=2, allow_nan=False) + "\n"


def _html_comparison(c: Comparison, look: Look) -> str:
    from memgauge.render import HtmlComparisonRenderer

    return HtmlComparisonRenderer().render(c)


def _terminal_sweep(a: SweepAnalysis, look: Look) -> str:
    from memgauge.render import TerminalSweepRenderer

    return TerminalSweepRenderer(width=look.width, color=look.color).render(a)


def _markdown_sweep(a: SweepAnalysis, look: Look) -> str:
    from memgauge.render import MarkdownSweepRenderer

    return MarkdownSweepRenderer().render(a)


def _json_sweep(a: SweepAnalysis, look: Look) -> str:
    from memgauge.render import JsonSweepRenderer

    return JsonSweepRenderer().render(a)


def _html_sweep(a: SweepAnalysis, look: Look) -> str:
    from memgauge.render import HtmlSweepRenderer

    return HtmlSweepRenderer().render(a)


def _terminal_fit(r: FitRecord, look: Look) -> str:
    from memgauge.render import TerminalFitRenderer

    return TerminalFitRenderer(width=look.width, color=look.color).render(r)


def _markdown_fit(r: FitRecord, look: Look) -> str:
    from memgauge.render import MarkdownFitRenderer

    return MarkdownFitRenderer().render(r)


def _json_fit(r: FitRecord, look: Look) -> str:
    from memgauge.render import JsonFitRenderer

    return JsonFitRenderer().render(r)


def _html_fit(r: FitRecord, look: Look) -> str:
    from memgauge.render import HtmlFitRenderer

    return HtmlFitRenderer().render(r)


def _terminal_plan(r: PlanRecord, look: Look) -> str:
    from memgauge.render import TerminalPlanRenderer

    return TerminalPlanRenderer(width=look.width, color=look.color).render(r)


def _markdown_plan(r: PlanRecord, look: Look) -> str:
    from memgauge.render import MarkdownPlanRenderer

    return MarkdownPlanRenderer().render(r)


def _json_plan(r: PlanRecord, look: Look) -> str:
    from memgauge.render import JsonPlanRenderer

    return JsonPlanRenderer().render(r)


def _html_plan(r: PlanRecord, look: Look) -> str:
    from memgauge.render import HtmlPlanRenderer

    return HtmlPlanRenderer().render(r)


def _terminal_verdict(j: Judged, look: Look) -> str:
    from memgauge.render import TerminalVerdictRenderer

    return TerminalVerdictRenderer(width=look.width, color=look.color).render(j.verdict)


def _markdown_verdict(j: Judged, look: Look) -> str:
    from memgauge.render import MarkdownVerdictRenderer

    return MarkdownVerdictRenderer().render(j.verdict)


def _json_verdict(j: Judged, look: Look) -> str:
    import json

    from memgauge.gate import verdict_json

    return json.dumps(verdict_json(j.verdict), indent=2, allow_nan=False) + "\n"


def _bmf_verdict(j: Judged, look: Look) -> str:
    import json

    from memgauge.gate import bencher_bmf

    return json.dumps(bencher_bmf({j.name: j.runs}), indent=2, allow_nan=False) + "\n"


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format(
            "terminal",
            ".txt",
            profile=_terminal_profile,
            comparison=_terminal_comparison,
            sweep=_terminal_sweep,
            fit=_terminal_fit,
            plan=_terminal_plan,
            verdict=_terminal_verdict,
            loads=("memgauge.render._terminal",),
        ),
        Format(
            "md",
            ".md",
            profile=_markdown_profile,
            comparison=_markdown_comparison,
            sweep=_markdown_sweep,
            fit=_markdown_fit,
            plan=_markdown_plan,
            verdict=_markdown_verdict,
        ),
        Format(
            "json",
            ".json",
            profile=_json_profile,
            comparison=_json_comparison,
            sweep=_json_sweep,
            fit=_json_fit,
            plan=_json_plan,
            verdict=_json_verdict,
        ),
        # Bencher Metric Format: the judged runs' figures, for dashboards
        Format("bmf", ".json", verdict=_bmf_verdict),
        Format(
            "html",
            ".html",
            page=True,
            profile=_html_profile,
            comparison=_html_comparison,
            sweep=_html_sweep,
            fit=_html_fit,
            plan=_html_plan,
            loads=("memgauge.render._html",),
        ),
    )
}
PAGE = FORMATS["html"]
RECORD_SUFFIX = FORMATS["json"].suffix  # a record's file: a profile, a sweep, a fit, a plan


def names(kind: Kind) -> list[str]:
    """The ``--format`` choices of a report of ``kind``, in the table's order."""
    return [f.name for f in FORMATS.values() if f.has(kind) and not f.page]


def format_option(p: argparse.ArgumentParser, kind: Kind, help: str, **kwargs: Any) -> None:
    """``--format`` with the choices of ``kind`` (default None: terminal, unless said otherwise)."""
    kwargs.setdefault("default", None)
    p.add_argument("--format", choices=names(kind), help=help, **kwargs)


def need(renderer: Callable[[T, Look], str] | None, fmt: str) -> Callable[[T, Look], str]:
    """``renderer`` where the table has it; a usage error where this kind of report has no such
    format (argparse's choices come from the same table, so only a caller's slip gets here)."""
    if renderer is None:
        raise UsageError(f"this report has no {fmt} format")
    return renderer
