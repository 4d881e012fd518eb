"""Reads and writes of the service's records, one short transaction each.

Claiming a queued submission is a compare-and-set (``UPDATE ... WHERE status = 'queued'``), so
several servers sharing one PostgreSQL database never start the same submission twice.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select, update

from memgauge.service._auth import new_token, shown_prefix, token_hash
from memgauge.service._db import Database
from memgauge.service._models import Submission, Token, utcnow

if TYPE_CHECKING:
    from collections.abc import Callable

    from sqlalchemy.orm import Session

QUEUED, RUNNING, DONE, FAILED, CANCELLED = "queued", "running", "done", "failed", "cancelled"
STATUSES = (QUEUED, RUNNING, DONE, FAILED, CANCELLED)
FINISHED = (DONE, FAILED, CANCELLED)
# "unmeasured": nothing failed, but a limit could not be measured and the policy does not allow that
VERDICTS = ("pass", "fail", "error", "unmeasured")


# -- tokens ----------------------------------------------------------------------------------------


def create_token(db: Database, name: str, role: str, secret: str | None = None) -> tuple[Token, str]:
    """A new token and its secret (shown once)."""
    secret = secret or new_token()
    with db.session() as s, s.begin():
        token = Token(name=name, role=role, token_hash=token_hash(secret), prefix=shown_prefix(secret))
        s.add(token)
    return token, secret


def find_token(db: Database, secret: str) -> Token | None:
    with db.session() as s:
        token = s.scalar(select(Token).where(Token.token_hash == token_hash(secret)))
    if token is None or token.revoked_at is not None:
        return None
    return token


def list_tokens(db: Database) -> list[Token]:
    with db.session() as s:
        return list(s.scalars(select(Token).order_by(Token.id)))


def get_token(db: Database, token_id: int) -> Token | None:
    with db.session() as s:
        return s.get(Token, token_id)


def revoke_token(db: Database, token_id: int) -> Token | None:
    with db.session() as s, s.begin():
        token = s.get(Token, token_id)
        if token is not None and token.revoked_at is None:
            token.revoked_at = utcnow()
    return token


def has_admin(db: Database) -> bool:
    with db.session() as s:
        return (
            s.scalar(select(func.count()).where(Token.role == "admin", Token.revoked_at.is_(None))) or 0
        ) > 0


# -- submissions -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class NewSubmission:
    owner_id: int
    policy: str
    budget: str
    filename: str
    kind: str
    entry: str
    args: list[str]
    upload: bytes
    prove: bool = False
    allow_unmeasured: bool = False
    machine: str | None = None
    admit_rule: str | None = None


class AdmissionError(Exception):
    """``add_submission``'s ``admit`` said no; the message says why."""


def add_submission(
    db: Database, new: NewSubmission, admit: Callable[[Usage], str | None] | None = None
) -> Submission:
    """Stored (committed) before the caller acknowledges it. ``admit`` sees the owner's usage and
    says why the submission may not be stored (``AdmissionError``), None when it may. Check and insert are
    one transaction that first writes the owner's token row: concurrent submissions of one token
    queue on that row's lock (PostgreSQL) or on the database's write lock (SQLite, which a deferred
    transaction takes at its first write, before it has read anything), so each sees the ones
    before it and a quota of 100 never admits 101."""
    with db.session() as s, s.begin():
        if admit is not None:
            s.execute(update(Token).where(Token.id == new.owner_id).values(name=Token.name))
            error = admit(_usage(s, new.owner_id))
            if error is not None:
                raise AdmissionError(error)
        sub = Submission(
            id=uuid.uuid4().hex,
            owner_id=new.owner_id,
            policy=new.policy,
            budget=new.budget,
            filename=new.filename,
            kind=new.kind,
            entry=new.entry,
            args=json.dumps(new.args),
            upload=new.upload,
            upload_bytes=len(new.upload),
            status=QUEUED,
            attempts=0,
            cancel_requested=False,
            prove=new.prove,
            allow_unmeasured=new.allow_unmeasured,
            machine=new.machine,
            admit_rule=new.admit_rule,
        )
        s.add(sub)
    return sub


@dataclass(frozen=True)
class Usage:
    """What one token holds: submissions waiting or running, and the bytes its submissions keep
    (uploads, profiles, output tails)."""

    waiting: int
    stored_bytes: int


def usage(db: Database, owner_id: int) -> Usage:
    with db.session() as s:
        return _usage(s, owner_id)


def _usage(s: Session, owner_id: int) -> Usage:
    mine = Submission.owner_id == owner_id
    stored = (
        func.coalesce(func.sum(Submission.upload_bytes), 0)
        + func.coalesce(func.sum(func.length(Submission.profile)), 0)
        + func.coalesce(func.sum(func.length(Submission.output_tail)), 0)
    )
    waiting = s.scalar(
        select(func.count()).select_from(Submission).where(mine, Submission.status.in_((QUEUED, RUNNING)))
    )
    held = s.scalar(select(stored).where(mine))
    return Usage(int(waiting or 0), int(held or 0))


def get_submission(db: Database, sub_id: str) -> Submission | None:
    with db.session() as s:
        return s.get(Submission, sub_id)


@dataclass(frozen=True)
class Page:
    items: list[Submission]
    total: int


def list_submissions(
    db: Database,
    *,
    owner_id: int | None = None,
    status: str | None = None,
    verdict: str | None = None,
    policy: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> Page:
    """Newest first. The upload and the profile stay in the database (they can be megabytes)."""
    from sqlalchemy.orm import defer

    where = []
    if owner_id is not None:
        where.append(Submission.owner_id == owner_id)
    if status is not None:
        where.append(Submission.status == status)
    if verdict is not None:
        where.append(Submission.verdict == verdict)
    if policy is not None:
        where.append(Submission.policy == policy)
    with db.session() as s:
        total = s.scalar(select(func.count()).select_from(Submission).where(*where)) or 0
        rows = s.scalars(
            select(Submission)
            .where(*where)
            .options(defer(Submission.upload), defer(Submission.profile), defer(Submission.output_tail))
            .order_by(Submission.created_at.desc(), Submission.id)
            .limit(limit)
            .offset(offset)
        )
        return Page(list(rows), total)


def request_cancel(db: Database, sub_id: str) -> Submission | None:
    """A queued submission is cancelled at once; a running one when its worker stops it. Both are
    compare-and-sets: a dispatcher may claim the submission between a read and a write here, and
    its claim must then get the request to stop, not be overwritten (the run would go on)."""
    with db.session() as s, s.begin():
        queued = s.execute(
            update(Submission)
            .where(Submission.id == sub_id, Submission.status == QUEUED)
            .values(status=CANCELLED, finished_at=utcnow(), reason="cancelled before it ran")
        )
        if queued.rowcount != 1:  # type: ignore[attr-defined]
            s.execute(
                update(Submission)
                .where(Submission.id == sub_id, Submission.status == RUNNING)
                .values(cancel_requested=True)
            )
    return get_submission(db, sub_id)


def claim_queued(db: Database, worker: str, n: int) -> list[Submission]:
    """Up to ``n`` of the oldest queued submissions, now running on ``worker``."""
    claimed: list[Submission] = []
    if n <= 0:
        return claimed
    with db.session() as s:
        ids = list(
            s.scalars(
                select(Submission.id)
                .where(Submission.status == QUEUED)
                .order_by(Submission.created_at, Submission.id)
                .limit(n * 2)
            )
        )
    for sub_id in ids:
        if len(claimed) >= n:
            break
        now = utcnow()
        with db.session() as s, s.begin():
            won = s.execute(
                update(Submission)
                .where(Submission.id == sub_id, Submission.status == QUEUED)
                .values(
                    status=RUNNING,
                    worker=worker,
                    started_at=now,
                    heartbeat_at=now,
                    attempts=Submission.attempts + 1,
                )
            )
            if won.rowcount == 1:  # type: ignore[attr-defined]
                sub = s.get(Submission, sub_id)
                if sub is not None:
                    claimed.append(sub)
    return claimed


def heartbeat(db: Database, ids: list[str]) -> None:
    if not ids:
        return
    with db.session() as s, s.begin():
        s.execute(update(Submission).where(Submission.id.in_(ids)).values(heartbeat_at=utcnow()))


def cancel_requested(db: Database, ids: list[str]) -> list[str]:
    if not ids:
        return []
    with db.session() as s:
        return list(
            s.scalars(select(Submission.id).where(Submission.id.in_(ids), Submission.cancel_requested))
        )


def finish(db: Database, sub_id: str, worker: str, **values: Any) -> bool:
    """Store a run's outcome, only if the submission is still this worker's run (a lease lost to
    another server's recovery must not overwrite what that server did)."""
    with db.session() as s, s.begin():
        return finish_in(s, sub_id, worker, values)


def finish_in(s: Session, sub_id: str, worker: str, values: dict[str, Any]) -> bool:
    """``finish`` within the caller's transaction (an admission judged in the same one)."""
    values = {k: _text(v) if isinstance(v, str) else v for k, v in values.items()}
    done = s.execute(
        update(Submission)
        .where(Submission.id == sub_id, Submission.worker == worker, Submission.status == RUNNING)
        .values(**values)
    )
    return bool(done.rowcount == 1)  # type: ignore[attr-defined]


def running(db: Database) -> list[Submission]:
    from sqlalchemy.orm import defer

    with db.session() as s:
        return list(
            s.scalars(
                select(Submission)
                .where(Submission.status == RUNNING)
                .options(defer(Submission.upload), defer(Submission.profile))
            )
        )


def requeue_or_fail(
    db: Database, sub: Submission, why: str, max_attempts: int, *, charge: bool = True
) -> str:
    """An interrupted run: queued again while attempts remain, else failed. ``charge``: whether
    this attempt counts (a server stopped on purpose does not charge the submission). Returns the
    new status."""
    attempts = sub.attempts if charge else max(0, sub.attempts - 1)
    why = _text(why)
    with db.session() as s, s.begin():
        if attempts < max_attempts:
            values: dict[str, Any] = {
                "status": QUEUED,
                "worker": None,
                "attempts": attempts,
                "reason": f"re-queued: {why} (attempt {sub.attempts} of {max_attempts})",
            }
            status = QUEUED
        else:
            values = {
                "status": FAILED,
                "verdict": "error",
                "finished_at": utcnow(),
                "attempts": attempts,
                "reason": f"{why}; gave up after {attempts} attempts",
            }
            status = FAILED
        s.execute(
            update(Submission)
            .where(Submission.id == sub.id, Submission.status == RUNNING, Submission.worker == sub.worker)
            .values(**values)
        )
    return status


def _text(value: str) -> str:
    """What a text column takes on every database: PostgreSQL refuses a NUL (which a program's
    output, stored with its result, may hold)."""
    return value.replace("\x00", "\ufffd")


def stale_before(seconds: float) -> dt.datetime:
    return utcnow() - dt.timedelta(seconds=seconds)
