"""The HTML report of one profile: a single self-contained file (see ``_html_page``).

Tables are rendered here, in Python, so the numbers are readable without JavaScript and testable
as text; the charts are drawn by Chart.js from the data embedded in the page. Everything shown is
capped (rows, series, shaded phases), so a one-hour profile stays a few hundred KB.

The page's sections are registered in ``SECTIONS``, in page order: a new section is a function
from a ``ProfileView`` to a ``Part`` (or None when it has nothing to show), registered there with
its anchor and the text of its link in the nav. The core's sections are the report document's
(``_section_*``), the page's view of each (its ``Only(("html",), ...)`` part) under its heading.
"""

from __future__ import annotations

import html
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memgauge._units import format_bytes
from memgauge.analysis import (
    cpu_cores,
    largest_series,
    longest_phases,
    phase_spans,
    phase_totals,
    top_imports,
)
from memgauge.model import Profile
from memgauge.render import _section_lines as core
from memgauge.render._document import Section
from memgauge.render._document_html import section_part
from memgauge.render._format import esc
from memgauge.render._html_page import Part, Sections, code, page, table, text
from memgauge.render._section_core import advice_section, processes_table
from memgauge.render._section_header import summary_cards
from memgauge.render._section_lines_page import rollups
from memgauge.render._section_phases import phases_table
from memgauge.render._sections import SECTIONS as DOCUMENT
from memgauge.sections import SECTIONS as SECTION_FOLDERS

MAX_PHASE_BARS = 20  # phase names on the share-of-wall-time chart (220 px high)
_MAX_SERIES = 8  # per-process memory lines drawn besides the tree total
_MAX_SHADED = 200  # phase spans shaded on the memory chart
# the sampled sum counts a page shared by two processes twice, so it may run above the cgroup
_TREE_LABEL = "sum of processes (shared pages in each)"


@dataclass(frozen=True)
class ProfileView:
    """What the sections of a profile's page are built from."""

    profile: Profile
    cwd: str | None
    max_lines: int


def _part(section: Section | None) -> Part | None:
    """A core section's page view; None where it has nothing for the page. Its note as the page
    always had it, its quotes as they are."""
    content = "" if section is None else section_part(section).content
    if section is None or not content:
        return None
    return Part(content, section.heading, html.escape(section.note, quote=False))


def _lines(
    build: Callable[[Profile, str | None, int], Section | None],
) -> Callable[[ProfileView], Part | None]:
    """The page's part of a line table's section, as many lines as the page shows."""
    return lambda v: _part(build(v.profile, v.cwd, v.max_lines))


def _summary(v: ProfileView) -> Part:
    return section_part(summary_cards(v.profile))


def _advice(v: ProfileView) -> Part | None:
    section = advice_section(v.profile, v.cwd)
    return None if section is None else section_part(section)


def _phases(v: ProfileView) -> Part | None:
    # the page's phases: 150 rows at most, whatever the text reports' limit (1 here)
    return _part(phases_table(v.profile, 1))


def _imports(v: ProfileView) -> Part | None:
    return _part(core.slow_imports(v.profile))


def _processes(v: ProfileView) -> Part | None:
    # the document's section, the page's own table in it (30 rows, a process's parent, start and
    # lifetime, sorted by value); 5: the text reports' rows, which the page leaves out
    section = processes_table(v.profile, 5)
    return None if section is None else section_part(section)


def _cores(p: Profile) -> tuple[list[float], list[float]]:
    tl = p.timeline
    return cpu_cores(tl.t_seconds, tl.cpu_user_seconds, tl.cpu_system_seconds, p.wall_seconds)


def _charts(v: ProfileView) -> Part | None:
    if not v.profile.timeline.t_seconds:
        return None
    # one sample (or CPU times not recorded) gives no rate: no empty box where the chart was
    _, rates = _cores(v.profile)
    cpu = '<div class="chart"><canvas id="chart-cpu"></canvas></div>' if rates else ""
    return Part(
        '<div class="chart tall"><canvas id="chart-memory"></canvas></div>' + cpu,
        "memory and CPU over time" if rates else "memory over time",
        "Resident memory of the process tree and of its largest processes; shaded bands are "
        "phases; the triangle marks the peak. Each point is the maximum of the samples it covers.",
    )


def _environment(v: ProfileView) -> Part | None:
    if not v.profile.environment:
        return None
    rows = []
    for key, value in _flatten(v.profile.environment):
        if key.endswith("_bytes") and isinstance(value, int):
            shown = format_bytes(value)
        else:
            shown = "—" if value is None else str(value)
        rows.append([code(key), text(shown)])
    return Part(table([("key", False), ("value", False)], rows), "environment")


def _documents(v: ProfileView) -> list[tuple[str, str | None, Part]]:
    """The sections of the report document (torch, training, I/O, GPU), as every format has them."""
    return [(entry.id, entry.nav, section_part(s)) for entry, s in DOCUMENT.built(v.profile)]


SECTIONS: Sections[ProfileView] = Sections()
SECTIONS.register("summary", None, _summary)
SECTIONS.register("advice", "advice", _advice)
SECTIONS.register("memory", "memory", _charts)
SECTIONS.register("phases", "phases", _phases)
SECTIONS.register("peak", "peak", _lines(core.held_lines))
SECTIONS.register("allocation", None, _lines(core.allocation_lines))
SECTIONS.register_group(_documents)
SECTIONS.register("lines", "lines", _lines(core.cpu_lines))
SECTIONS.register("rollups", "functions & files", _lines(rollups))
SECTIONS.register("leaks", "leaks", _lines(core.leak_suspects))
SECTIONS.register("exit", "held at exit", _lines(core.held_at_exit))
SECTIONS.register("imports", "imports", _imports)
SECTIONS.register("processes", "processes", _processes)
SECTIONS.register("environment", "environment", _environment)


class HtmlRenderer:
    def __init__(self, cwd: str | None = None, max_lines: int = 100) -> None:
        self.cwd = cwd
        self.max_lines = max_lines

    def render(self, profile: Profile) -> str:
        command = shlex.join(profile.command)
        nav, sections = SECTIONS.build(ProfileView(profile, self.cwd, self.max_lines))
        body = (
            f"<header><h1>memgauge <code>{esc(command)}</code></h1><nav>{nav}</nav></header>\n"
            f"<main>{sections}</main>\n"
            f"<footer>memgauge {esc(profile.memgauge_version)} · profile schema {profile.schema_version}"
            f"{' · started ' + esc(profile.started_at) if profile.started_at else ''}</footer>"
        )
        return page(f"memgauge: {command}", body, _data(profile))


def _data(p: Profile) -> dict[str, Any]:
    """What the page script draws the charts from."""
    tl = p.timeline
    series: list[dict[str, Any]] = []
    if tl.cgroup_bytes:
        series.append({"label": "cgroup (page cache included)", "start": 0, "values": tl.cgroup_bytes})
    if tl.tree_resident_bytes:
        series.append({"label": _TREE_LABEL, "start": 0, "values": tl.tree_resident_bytes})
    names = {x.pid: _short_command(x.cmdline) for x in p.processes}
    for s in largest_series(p, _MAX_SERIES):
        label = f"{s.pid} {names.get(s.pid, '')}".strip()
        series.append({"label": label, "start": s.start_index, "values": s.resident_bytes})
    cpu_t, cores = _cores(p)
    # the names with the most time, in the order they first started: bars stay readable
    longest = {t.name for t in longest_phases(p, MAX_PHASE_BARS)}
    totals = [t for t in phase_totals(p) if t.name in longest]
    own = top_imports(p, 15, by="own memory")
    data: dict[str, Any] = {
        "kind": "profile",
        "wall": p.wall_seconds,
        "memory": {
            "t": [round(x, 3) for x in tl.t_seconds],
            "series": series,
            "peak": None
            if p.peak.at_seconds is None
            else {"t": round(p.peak.at_seconds, 3), "bytes": p.peak.resident_bytes},
            "phases": [
                {"name": n, "start": round(s, 3), "end": round(e, 3)}
                for n, s, e in phase_spans(p.phases, _MAX_SHADED)
            ],
        },
        "cpu": {"t": cpu_t, "cores": cores},
        "phases": {
            "labels": [t.name for t in totals],
            "seconds": [round(t.seconds, 4) for t in totals],
            "peaks": [t.peak_bytes for t in totals],
        },
        "imports": {
            "labels": [r.package for r in own],
            "bytes": [r.self_resident_bytes for r in own],
            "seconds": [round(r.self_seconds, 4) for r in own],
        },
    }
    for spec in SECTION_FOLDERS:
        # each section's charts' data, by its name, only where it has some (torch: where there
        # are torch figures; training: timed steps): the data of every other page stays as it was
        page_data = spec.part("page_data") if spec.shows(p) else None
        value = page_data(p) if page_data is not None else None
        if value is not None:
            data[spec.name] = value
    return data


def _short_command(cmdline: list[str]) -> str:
    shown = " ".join(a.rsplit("/", 1)[-1] if i == 0 else a for i, a in enumerate(cmdline[:3]))
    return shown[:40]


def _flatten(data: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out += _flatten(value, name + ".")
        else:
            out.append((name, value))
    return out
