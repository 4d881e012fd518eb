"""The service's tables. The Alembic migrations in ``migrations/`` create them; these classes are
how the code reads and writes them, and a test checks the two agree."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


class Token(Base):
    """An API token. Only the SHA-256 of the secret is kept: tokens are 256 random bits, so a fast
    hash is enough (no dictionary to attack) and lets every request find its token by index."""

    __tablename__ = "tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(20))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    revoked_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class Policy(Base):
    """A named budget (``"rss=512MiB wall=30s"``, the gate's syntax)."""

    __tablename__ = "policies"

    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    budget: Mapped[str] = mapped_column(Text)
    description: Mapped[str] = mapped_column(Text, default="")
    # a pass is proved: the program run again under the budget's rss as a hard limit, caches cold
    prove: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # a limit the host could not measure (a gpu limit without a GPU) passes; else the verdict is
    # "unmeasured", never a pass
    allow_unmeasured: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # a pass is admitted to this machine, judged with what it already holds by ``rule``
    machine: Mapped[str | None] = mapped_column(String(100), nullable=True)
    rule: Mapped[str] = mapped_column(String(10), default="worst", server_default="worst")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Machine(Base):
    """A machine models are deployed on: its memory and cores. Submissions of a policy that names
    it are admitted to it while their shares fit (``_admission.py``)."""

    __tablename__ = "machines"

    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    memory_bytes: Mapped[int] = mapped_column(BigInteger)
    cores: Mapped[int] = mapped_column(Integer)
    description: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Submission(Base):
    """One submitted program and everything learnt about it. The upload itself is stored here, so
    a submission survives the loss of any worker or server, and runs on any node."""

    __tablename__ = "submissions"
    __table_args__ = (
        Index("ix_submissions_status_created", "status", "created_at"),
        Index("ix_submissions_owner_created", "owner_id", "created_at"),
        Index("ix_submissions_machine_held", "machine", "held"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("tokens.id"))
    policy: Mapped[str] = mapped_column(String(100))
    # the policy's budget when it was submitted: changing a policy later does not change verdicts
    budget: Mapped[str] = mapped_column(Text)
    filename: Mapped[str] = mapped_column(String(255))
    kind: Mapped[str] = mapped_column(String(10))
    entry: Mapped[str] = mapped_column(String(1000))
    args: Mapped[str] = mapped_column(Text, default="[]")
    upload: Mapped[bytes] = mapped_column(LargeBinary)
    upload_bytes: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(20), default="queued")
    verdict: Mapped[str | None] = mapped_column(String(10), nullable=True)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    started_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    heartbeat_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    worker: Mapped[str | None] = mapped_column(String(200), nullable=True)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    peak_rss_bytes: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    wall_seconds: Mapped[float | None] = mapped_column(Float, nullable=True)
    exit_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    profile: Mapped[str | None] = mapped_column(Text, nullable=True)
    verdict_json: Mapped[str | None] = mapped_column(Text, nullable=True)
    sandbox: Mapped[str | None] = mapped_column(Text, nullable=True)
    output_tail: Mapped[str | None] = mapped_column(Text, nullable=True)
    # the policy's ``prove`` when it was submitted, and the proof's record (JSON) once made
    prove: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    proof: Mapped[str | None] = mapped_column(Text, nullable=True)
    # the policy's machine and rule when it was submitted; the admission's record (JSON, with the
    # timeline later admissions are judged with) and share once judged; ``held`` while admitted
    # and not released
    machine: Mapped[str | None] = mapped_column(String(100), nullable=True)
    admit_rule: Mapped[str | None] = mapped_column(String(10), nullable=True)
    admission: Mapped[str | None] = mapped_column(Text, nullable=True)
    share_bytes: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    held: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    released_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # the policy's ``allow_unmeasured`` when it was submitted
    allow_unmeasured: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
