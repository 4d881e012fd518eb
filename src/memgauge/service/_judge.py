"""A finished run's outcome as the submission records it: the verdict against the submission's
budget (the gate's ``judge``, stored as ``memgauge check --format json`` prints it), the figures the
lists show, and why; and the stored outcome read back (the verdict as the gate's typed records, the
profile as its HTML report).

Verdicts: ``pass`` within budget; ``fail`` a limit is over (a run the sandbox stopped at the
policy's memory or wall limit is over that limit); ``error`` the program failed, or the sandbox
stopped it for a limit of its own (output, processes), or it could not run at all; ``unmeasured``
nothing failed, but a limit could not be measured on this host (a gpu limit without a GPU) and the
policy does not allow that (``allow_unmeasured``): a gate that could not look does not say yes.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from memgauge.service._models import Submission, utcnow

if TYPE_CHECKING:
    from memgauge.gate import Verdict
    from memgauge.sweep import JobResult


def outcome_values(sub: Submission, result: JobResult) -> dict[str, Any]:
    from memgauge.gate import judge, parse_budget, result_line, verdict_json
    from memgauge.model import Profile

    values: dict[str, Any] = {
        "status": "done",
        "finished_at": utcnow(),
        "sandbox": None if result.sandbox is None else json.dumps(result.sandbox),
        "output_tail": result.output_tail,
        "exit_code": result.exit_code,
    }
    if result.profile is None:
        values.update(status="failed", verdict="error", reason=result.error or "the run wrote no profile")
        return values
    profile = Profile.from_dict(result.profile)
    budget = parse_budget(sub.budget, source=f"policy {sub.policy}")
    verdict = judge(profile, budget, allow_unmeasured=bool(sub.allow_unmeasured))
    values.update(
        profile=json.dumps(result.profile, allow_nan=False),
        verdict_json=json.dumps(verdict_json(verdict), allow_nan=False),
        # the run's one memory figure, the one its verdict's rss judged (docs/records.md)
        peak_rss_bytes=profile.peak.headline_bytes,
        wall_seconds=profile.wall_seconds,
        exit_code=profile.exit.code,
    )
    if verdict.failed:
        values.update(verdict="fail", reason=result_line(verdict) + _stopped(profile))
    elif result.error:
        values.update(verdict="error", reason=result.error)
    elif verdict.program_failed:
        values.update(verdict="error", reason=f"the program failed ({verdict.program_status})")
    elif verdict.unjudged:
        values.update(verdict="unmeasured", reason=_unmeasured(verdict))
    else:
        values.update(verdict="pass", reason=result_line(verdict))
    return values


def _unmeasured(verdict: Verdict) -> str:
    keys = ", ".join(f"{r.limit.key} ({r.note})" if r.note else r.limit.key for r in verdict.unmeasured)
    return f"not judged: could not measure {keys}; the policy does not allow unmeasured limits"


def _stopped(profile: Any) -> str:
    stopped = profile.exit.stopped_by
    return f"; stopped: {stopped}" if stopped else ""


def stored_verdict(sub: Submission) -> Verdict | None:
    """The verdict stored with ``sub``, None when there is none or it cannot be read (a row
    written by hand, say): a page shows the rest of the submission either way."""
    from memgauge.gate import Verdict

    if not sub.verdict_json:
        return None
    try:
        return Verdict.from_dict(json.loads(sub.verdict_json))
    except ValueError:
        return None


def report_html(profile_json: str) -> str:
    """The HTML report (one offline page) of a stored profile."""
    from memgauge.model import Profile
    from memgauge.render import HtmlRenderer

    return HtmlRenderer().render(Profile.from_dict(json.loads(profile_json)))
