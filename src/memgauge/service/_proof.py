"""A pass proved (a policy with ``prove``, issue 16): the submission's program run again in the
sandbox under the budget's whole-run ``rss`` as a hard memory limit, caches cold where the host
allows, and the verdict turned into a fail when the kernel OOM-kills it there (or it fails).

The same proof as ``memgauge check --prove``: the runner's ``trial_of`` and ``Proof`` read the two
runs, the gate's ``apply_proof`` folds the outcome into the verdict. The measured run of a
submission that proves is the unlimited one (the sandbox holds it at the server's
``--max-memory`` only), so the slowdown compares the same program with and without the limit.
The dispatcher (``_dispatch``) runs both through its engine; this module says which jobs, and what
their results mean.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memgauge.service._models import Submission
    from memgauge.sweep import Job, JobResult

# the note of a proof the host could not make: never a pass
NOT_ENFORCED = "not proved: this host's sandbox cannot enforce a memory limit ({why}); not a pass"


@dataclass(frozen=True)
class Pending:
    """A measured run that passed, waiting for its proof: its outcome's values and result, and the
    limit the proof runs under."""

    values: dict[str, Any]
    base: JobResult
    limit_bytes: int


def proof_limit(sub: Submission) -> int | None:
    """The whole-run ``rss`` limit ``sub`` is proved under; None when it asks for no proof."""
    from memgauge.gate import parse_budget

    if not sub.prove:
        return None
    limit = parse_budget(sub.budget).get("rss")
    return None if limit is None else int(limit.value)


def proof_job(job: Job, limit_bytes: int) -> Job:
    """The proof's run: ``job`` again, its sandbox's memory limit at ``limit_bytes``, line sampling
    off (it adds memory of its own, as in ``check --prove``)."""
    assert job.sandbox is not None
    sandbox = dataclasses.replace(job.sandbox, memory_bytes=limit_bytes)
    options = job.run_options if "--no-lines" in job.run_options else (*job.run_options, "--no-lines")
    return dataclasses.replace(job, id=f"{job.id}-proof", sandbox=sandbox, run_options=options)


def cold_caches(engine: str) -> str:
    """Evict the page cache the program's runs map, where the runs are on this host; says how cold
    they are. The interpreter's installation is evicted (``posix_fadvise``; pages a process maps
    stay); the upload lies on the run's own tmpfs, which is memory and stays."""
    from memgauge.runner import evict_page_cache

    if engine != "local":
        return f"warm: the {engine} engine placed the runs on other nodes (their page cache is theirs)"
    roots = sorted({os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)})
    evict_page_cache(roots)
    return (
        "cold: the Python installation's files evicted from page cache before each run (not the "
        "upload: it lies on the run's tmpfs)"
    )


def _enforced(result: JobResult) -> str | None:
    """None when the proof run was held by a cgroup memory limit; else why it was not."""
    applied = (result.sandbox or {}).get("applied") or {}
    detail = str(applied.get("memory") or "")
    if "cgroup v" in detail and "watchdog only" not in detail:
        return None
    not_applied = (result.sandbox or {}).get("not_applied") or {}
    return detail or str(not_applied.get("memory") or "the memory piece was not applied")


def proved_values(
    values: dict[str, Any], base: JobResult, proof: JobResult, limit_bytes: int, caches: str
) -> dict[str, Any]:
    """``values`` (the measured run's outcome, a pass) with the proof folded in: the verdict, its
    reason and stored verdict, and the proof's record (``ProofOut``)."""
    from memgauge.gate import Verdict, apply_proof, result_line, verdict_json
    from memgauge.model import Profile
    from memgauge.runner import Proof, trial_of

    values = dict(values)
    cold = caches.startswith("cold")
    record: dict[str, Any] = {"limit_bytes": limit_bytes, "made": False, "caches": caches}
    why = _enforced(proof)
    if proof.profile is None or base.profile is None:
        why = why or f"the proof run wrote no profile ({proof.error or 'no reason given'})"
        note = f"not proved: {why}; the verdict is not a pass"
        record["note"] = note
        return {**values, "verdict": "error", "reason": note, "proof": json.dumps(record)}
    if why is not None:
        note = NOT_ENFORCED.format(why=why)
        record["note"] = note
        return {**values, "verdict": "error", "reason": note, "proof": json.dumps(record)}
    base_trial = trial_of(Profile.from_dict(base.profile), None, cold=cold, expect=None)
    under = trial_of(Profile.from_dict(proof.profile), limit_bytes, cold=cold, expect=base_trial.exit_code)
    made = Proof(limit_bytes, cold, base_trial, under)
    record.update(made.to_dict(), made=True, caches=caches)
    verdict = apply_proof(
        Verdict.from_dict(json.loads(values["verdict_json"])), survived=made.survived, note=made.note
    )
    values.update(verdict_json=json.dumps(verdict_json(verdict), allow_nan=False), proof=json.dumps(record))
    if made.survived:
        values["reason"] = f"{result_line(verdict)}; {made.note}"
    else:
        values.update(verdict="fail", reason=f"{result_line(verdict)}: {made.note}")
    return values
