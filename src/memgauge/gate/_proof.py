"""A verdict after its budget's proof (issue 16): the whole-run ``rss`` result of a pass, once the
program was run again under that limit as a hard limit (``memgauge check --prove``, and the
service's ``prove`` policies). The proof itself is the runner's (``memgauge.runner.Proof``): this
module only folds what it found into the verdict, so both callers judge a proof alike."""

from __future__ import annotations

import dataclasses

from memgauge.gate._records import CheckResult, Verdict

__all__ = ["apply_proof", "proved_limit"]


def proved_limit(verdict: Verdict) -> int | None:
    """The whole-run ``rss`` limit a proof runs under, in bytes; None when the budget has none."""
    for r in verdict.results:
        if r.limit.metric == "rss" and r.limit.phase is None and not r.limit.lower:
            return int(r.limit.value)
    return None


def apply_proof(verdict: Verdict, *, survived: bool, note: str) -> Verdict:
    """``verdict`` with its whole-run ``rss`` result proved: kept (the proof's ``note`` added)
    when the program ``survived`` the run under the limit, a fail (with the note) when it did not:
    the budget passed on a measured run, yet the kernel kills the program at that limit, so the
    number is not one a container can be given. A verdict without such a result is returned as it
    is."""
    index = next(
        (i for i, r in enumerate(verdict.results) if r.limit.metric == "rss" and r.limit.phase is None),
        None,
    )
    if index is None:
        return verdict
    result = verdict.results[index]
    if survived:
        proved = dataclasses.replace(result, note="; ".join(n for n in (result.note, note) if n))
    else:
        proved = dataclasses.replace(result, status="fail", note=note)
    results: tuple[CheckResult, ...] = (*verdict.results[:index], proved, *verdict.results[index + 1 :])
    return dataclasses.replace(verdict, results=results)
