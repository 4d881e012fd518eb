"""Admission: a pass of a policy that names a machine joins what that machine holds only when
``analysis.admit`` says it fits there, by the policy's rule (the worst case, or a percentile of the
combined peak under random offsets); otherwise the verdict is ``fail``, with why.

A submission's share is its plan member (``analysis.plan_input`` of its profile, at the machine's
cores): the container need plus the kernel's share per memory group, and the timeline later
admissions are judged with, stored with the admission's record. The judgement, the result and
the share are written in one transaction, with the machine's row locked (PostgreSQL's ``FOR
UPDATE``; SQLite serves one server, whose admissions a lock puts in a row), so two servers never
both admit into the last free bytes. Releasing a share is judging without it: the next admission
does not count it.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from memgauge.service import _store as store
from memgauge.service._models import Machine, Submission, utcnow

if TYPE_CHECKING:
    from memgauge.analysis import Admission, PlanInput
    from memgauge.service._db import Database

_LOCK = threading.Lock()


def finish(db: Database, sub: Submission, worker: str, values: dict[str, Any]) -> bool:
    """Stores a run's outcome (``store.finish``); a pass of a policy naming a machine is judged
    for admission there first, in the same transaction."""
    if sub.machine is None or values.get("verdict") != "pass" or not values.get("profile"):
        return store.finish(db, sub.id, worker, **values)
    with _LOCK, db.session() as s, s.begin():
        machine = s.scalar(select(Machine).where(Machine.name == sub.machine).with_for_update())
        if machine is None:
            values.update(
                verdict="fail", reason=f"{values['reason']}; not admitted: no machine {sub.machine!r}"
            )
            return store.finish_in(s, sub.id, worker, values)
        stored = s.scalars(
            select(Submission.admission).where(
                Submission.machine == machine.name, Submission.held.is_(True), Submission.id != sub.id
            )
        )
        held = [member for text in stored if (member := stored_member(text)) is not None]
        values.update(_judged(sub, machine, held, json.loads(values["profile"]), values["reason"]))
        return store.finish_in(s, sub.id, worker, values)


def _judged(
    sub: Submission, machine: Machine, held: list[PlanInput], profile: dict[str, Any], reason: str
) -> dict[str, Any]:
    from memgauge._errors import UsageError
    from memgauge.analysis import admit, plan_input
    from memgauge.model import Profile

    rule = sub.admit_rule or "worst"
    candidate = plan_input(
        Profile.from_dict(profile),
        name=sub.id,
        source=sub.filename,
        command=[sub.entry, *json.loads(sub.args)],
        cores=machine.cores,
    )
    try:
        judged = admit(held, candidate, machine_bytes=machine.memory_bytes, rule=rule)
    except UsageError as e:  # a percentile rule on a server without numpy
        return {"verdict": "error", "reason": f"{reason}; admission to {machine.name} failed: {e}"}
    record = admission_record(judged, machine.name, candidate, len(held))
    line = admission_line(record)
    if not judged.admitted:
        return {"verdict": "fail", "reason": f"{reason}; {line}", "admission": json.dumps(record)}
    return {
        "reason": f"{reason}; {line}",
        "admission": json.dumps(record),
        "share_bytes": candidate.peak_bytes,
        "held": True,
    }


def admission_record(judged: Admission, machine: str, member: PlanInput, alongside: int) -> dict[str, Any]:
    """The stored record: the judgement, the share, how many admitted it was judged alongside."""
    return {
        "machine": machine,
        "rule": judged.rule,
        "admitted": judged.admitted,
        "before_bytes": judged.before_bytes,
        "after_bytes": judged.after_bytes,
        "machine_bytes": judged.machine_bytes,
        "share_bytes": member.peak_bytes,
        "alongside": alongside,
        "judged_at": utcnow().isoformat(),
        # what later admissions to this machine judge with
        "timeline": {
            "member": dataclasses.asdict(member.member),
            "t_seconds": list(member.t_seconds),
            "bytes_at": list(member.bytes_at),
        },
    }


def admission_line(record: dict[str, Any]) -> str:
    """The admission in one line, as the reason carries it."""
    from memgauge._units import format_bytes

    figure = f"{format_bytes(record['after_bytes'])} with it of {format_bytes(record['machine_bytes'])}"
    if record["admitted"]:
        return f"admitted to {record['machine']} ({record['rule']}: {figure})"
    return f"not admitted to {record['machine']} ({record['rule']}: {figure}, over by " + (
        f"{format_bytes(record['after_bytes'] - record['machine_bytes'])})"
    )


def stored_member(text: str | None) -> PlanInput | None:
    """The plan member an admission's record keeps; None when it has none (a row written by hand)."""
    from memgauge.analysis import PlanInput
    from memgauge.model import PlanMember

    if not text:
        return None
    try:
        timeline = json.loads(text)["timeline"]
        member = PlanMember(**timeline["member"])
        return PlanInput(member, tuple(timeline["t_seconds"]), tuple(int(b) for b in timeline["bytes_at"]))
    except (ValueError, KeyError, TypeError):
        return None
