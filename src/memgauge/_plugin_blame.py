"""The pytest plugin's words about a test's verdict: the breach's line corrected to the test's own,
the line named relative to the rootdir, and the failure message (``memgauge.pytest_plugin``, which
loads this module only once a test has a budget)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import CodeType

    from memgauge.gate import CheckResult, Verdict
    from memgauge.model import Profile


def own_line(code: CodeType | None, verdict: Verdict) -> Verdict:
    """A breach blamed on pytest's call of the test function (``code``: None when it has none) is
    the test's: a C operation of the test kept the GIL until the test had returned (``b"x" * n``
    as its last use), so the sampler saw only pytest's frame. The test's line most likely to have
    held it (``stalled_line`` up to the test's end) is named instead."""
    from dataclasses import replace

    from memgauge.capture import source_line, stalled_line

    ours = f"{os.sep}_pytest{os.sep}"
    if code is None or not any(r.blame and ours in (r.blame.file or "") for r in verdict.results):
        return verdict
    line = stalled_line(code, len(code.co_code)) or code.co_firstlineno
    file, source = code.co_filename, source_line(code.co_filename, line)
    results = [
        replace(r, blame=replace(r.blame, file=file, line=line, function=code.co_name, source=source))
        if r.blame and ours in (r.blame.file or "")
        else r
        for r in verdict.results
    ]
    return replace(verdict, results=tuple(results))


def blamed_line(result: CheckResult, rootdir: str) -> str | None:
    blame = result.blame
    if blame is None or not blame.file:
        return None
    return _where(blame.file, blame.line or 0, rootdir)


def message(verdict: Verdict, grown: Profile, start_tree: int, rootdir: str) -> str:
    from memgauge._units import format_bytes
    from memgauge.gate import format_amount

    lines = []
    for result in verdict.results:
        if verdict.unjudged and result.status == "unmeasured":
            lines.append(
                f"budget not measured: {result.limit.key} ({result.note or 'no figure'}); "
                "--memgauge-allow-unmeasured or memory_budget(allow_unmeasured=True) accepts it"
            )
            continue
        if result.status != "fail" or result.measured is None:
            continue
        limit = result.limit
        kind = "memory" if limit.unit == "bytes" else "time"
        over = float(result.measured) - limit.value
        at_least = "at least " if result.at_least else ""
        text = (
            f"{kind} budget exceeded: {limit.key} {at_least}{format_amount(result.measured, limit.unit)} > "
            f"{format_amount(limit.value, limit.unit)} (over by {at_least}{format_amount(over, limit.unit)})"
        )
        if result.at_least:
            text += f": {result.note}"
        text += _blamed(result, grown, rootdir)
        lines.append(text)
    if any(r.status == "fail" and r.limit.metric == "rss" for r in verdict.results):
        peak = grown.peak.resident_bytes + start_tree
        lines.append(
            f"  rss is the test's growth: the resident peak of its process tree, {format_bytes(peak)}, "
            f"minus the {format_bytes(start_tree)} it held when the test began (processes the test "
            "starts count in full)"
        )
    return "\n".join(lines)


def _blamed(result: CheckResult, grown: Profile, rootdir: str) -> str:
    """Where a failed limit's figure was made: its phase, line and process, or why no line."""
    blame, limit = result.blame, result.limit
    text = ""
    if blame is not None and blame.phase and limit.phase is None:
        text += f" in phase {blame.phase}"
    if blame is not None and blame.file:
        text += f" at {_where(blame.file, blame.line or 0, rootdir)}"
        if blame.source:
            text += f" {_quoted(blame.source)}"
        own = grown.processes[0].pid if grown.processes else None
        if blame.pid is not None and blame.pid != own:
            text += f" (process {blame.pid})"
    elif limit.metric == "rss" and not grown.lines:
        # a sampler of memgauge run's already samples this process: the lines are in its profile
        text += " (no line: this process's lines are sampled elsewhere)"
    elif limit.metric == "rss":
        # the sampler saw no line above the start: a peak shorter than its interval, or made and
        # released by C code that kept the GIL (the process's own VmHWM still caught it)
        text += " (no line: the peak was too brief for the line sampler)"
    return text


def _where(file: str, line: int, rootdir: str) -> str:
    from memgauge.analysis import short_path

    return f"{short_path(file, rootdir)}:{line}" if line else short_path(file, rootdir)


def _quoted(source: str, width: int = 60) -> str:
    text = " ".join(source.split())
    return "'" + (text if len(text) <= width else text[: width - 3] + "...") + "'"
