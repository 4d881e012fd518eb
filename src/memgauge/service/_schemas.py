"""The API's documents, as the OpenAPI schema publishes them."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from memgauge.service._models import Machine, Policy, Submission, Token
from memgauge.service._rules import (
    MACHINE_NAME,
    MAX_CORES,
    MAX_POLICY_TEXT,
    MAX_SIZE_TEXT,
    MAX_TOKEN_NAME,
    NO_NUL,
    AdmitRule,
    Role,
)

Status = Literal["queued", "running", "done", "failed", "cancelled"]
VerdictName = Literal["pass", "fail", "error", "unmeasured"]


class ErrorOut(BaseModel):
    """Every error answer: ``detail`` says what went wrong, in words."""

    detail: str


class FieldError(BaseModel):
    loc: list[str | int] = Field(description="where: 'body', 'query', 'path' or 'header', then the name")
    msg: str
    type: str


class ValidationErrorOut(ErrorOut):
    """422: the request is well-formed but its values are refused. ``errors``: the parameters that
    did not validate, one entry each (empty when the service refused the values themselves, e.g. an
    unknown policy)."""

    errors: list[FieldError] = Field(default_factory=list)


class Me(BaseModel):
    id: int
    name: str
    role: Role


class TokenIn(BaseModel):
    name: str = Field(min_length=1, max_length=MAX_TOKEN_NAME, pattern=NO_NUL)
    role: Role = "submitter"


class TokenOut(BaseModel):
    id: int
    name: str
    role: Role
    prefix: str = Field(description="the token's first characters, to tell tokens apart")
    created_at: dt.datetime
    revoked_at: dt.datetime | None


class NewTokenOut(TokenOut):
    token: str = Field(description="the secret: shown this once, stored only as a hash")


class LimitOut(BaseModel):
    key: str
    metric: str
    phase: str | None
    value: float
    unit: str
    lower: bool = Field(
        default=False, description="a lower bound ('samples_per_s>=400'): the figure must be at least value"
    )


class PolicyIn(BaseModel):
    budget: str = Field(
        min_length=1,
        max_length=MAX_POLICY_TEXT,
        pattern=NO_NUL,
        description="limits in the gate's syntax: 'rss=512MiB wall=30s'",
    )
    description: str = Field(default="", max_length=MAX_POLICY_TEXT, pattern=NO_NUL)
    prove: bool = Field(
        default=False,
        description="prove a pass: run the program again under the budget's rss as a hard limit, "
        "caches cold; OOM-killed or failing there, the verdict is fail (needs an rss limit)",
    )
    machine: str | None = Field(
        default=None,
        pattern=MACHINE_NAME,
        description="admit each pass to this machine while it fits with what the machine holds",
    )
    rule: AdmitRule = Field(
        default="worst",
        description="admission's rule: the worst case (every peak at once), or that percentile of "
        "the combined peak under random offsets (needs a machine)",
    )
    allow_unmeasured: bool = Field(
        default=False,
        description="accept a limit this host cannot measure (a gpu limit without a GPU): without "
        "it such a run's verdict is 'unmeasured', never a pass",
    )


class PolicyOut(BaseModel):
    name: str
    budget: str
    description: str
    prove: bool
    machine: str | None
    rule: AdmitRule
    allow_unmeasured: bool = False
    limits: list[LimitOut]
    created_at: dt.datetime
    updated_at: dt.datetime


class MachineIn(BaseModel):
    memory: str = Field(
        min_length=1, max_length=MAX_SIZE_TEXT, pattern=NO_NUL, description="its memory with its unit: '8GiB'"
    )
    cores: int = Field(ge=1, le=MAX_CORES)
    description: str = Field(default="", max_length=MAX_POLICY_TEXT, pattern=NO_NUL)


class ShareOut(BaseModel):
    """One admitted submission's share of a machine: its container need plus the kernel's share."""

    submission: str | None = Field(description="its id; null for another owner's (ids are not disclosed)")
    policy: str
    share_bytes: int
    admitted_at: dt.datetime | None


class MachineOut(BaseModel):
    """A machine and its fill: the shares admitted to it and not released, against its memory."""

    name: str
    memory_bytes: int
    cores: int
    description: str
    held_bytes: int = Field(description="the admitted shares together (every peak at once)")
    free_bytes: int = Field(description="its memory less held_bytes (negative: over)")
    shares: list[ShareOut]
    created_at: dt.datetime
    updated_at: dt.datetime


class AdmissionOut(BaseModel):
    """A pass judged for admission to its policy's machine, with what the machine held then."""

    machine: str
    rule: AdmitRule
    admitted: bool
    before_bytes: int = Field(description="the rule's figure of what the machine held")
    after_bytes: int = Field(description="the rule's figure with this submission")
    machine_bytes: int
    share_bytes: int = Field(description="this submission's share: its container need and the kernel's")
    alongside: int = Field(description="how many admitted submissions it was judged with")
    held: bool = Field(description="admitted and not released")
    released_at: dt.datetime | None


class Links(BaseModel):
    self: str
    verdict: str
    profile: str
    report: str
    output: str
    cancel: str
    release: str


class ProofOut(BaseModel):
    """A pass's proof (a policy with ``prove``): the program run again under ``limit_bytes`` as a
    hard memory limit in a fresh cgroup, caches cold where the host allows (``caches`` says), beside
    the measured run, which ran without it. ``made``: false when this host's sandbox could not
    enforce the limit (``note`` says why; the verdict is then ``error``, never a pass)."""

    limit_bytes: int
    made: bool
    outcome: Literal["survived", "OOM-killed", "failed"] | None = None
    survived: bool | None = None
    slowdown: float | None = Field(default=None, description="its wall time over the measured run's")
    limit_hits: int | None = Field(default=None, description="how often usage hit the limit (failcnt)")
    oom_kills: int | None = None
    exit_code: int | None = None
    wall_seconds: float | None = None
    unlimited_wall_seconds: float | None = None
    peak_bytes: int | None = None
    caches: str = Field(default="", description="how cold the runs' caches were")
    note: str = Field(description="the proof in one line")


class SubmissionOut(BaseModel):
    id: str
    owner: int
    policy: str
    budget: str
    filename: str
    kind: Literal["py", "zip", "tar.gz"]
    entry: str
    args: list[str]
    upload_bytes: int
    status: Status
    verdict: VerdictName | None
    reason: str | None
    created_at: dt.datetime
    started_at: dt.datetime | None
    finished_at: dt.datetime | None
    attempts: int
    peak_rss_bytes: int | None = Field(
        description="the run's memory figure, the one its verdict's rss limit judged: what a container needs "
        "(the profile's peak.needs_bytes; its resident peak where that was not measured)"
    )
    wall_seconds: float | None
    exit_code: int | None
    sandbox: dict[str, Any] | None = Field(
        description="which limits were applied to the run, and why any was not"
    )
    prove: bool = Field(default=False, description="the policy asked for a proof of a pass")
    allow_unmeasured: bool = Field(default=False, description="the policy accepted unmeasured limits")
    proof: ProofOut | None = Field(default=None, description="the proof, once made")
    machine: str | None = Field(default=None, description="the policy's machine when it was submitted")
    admission: AdmissionOut | None = Field(default=None, description="its admission, once judged")
    links: Links


class SubmissionPage(BaseModel):
    items: list[SubmissionOut]
    total: int
    limit: int
    offset: int


class Health(BaseModel):
    status: Literal["ok"]
    version: str
    engine: str
    workers: int
    in_flight: int


def aware(t: dt.datetime | None) -> dt.datetime | None:
    """SQLite hands back naive datetimes; every time stored is UTC."""
    if t is None or t.tzinfo is not None:
        return t
    return t.replace(tzinfo=dt.timezone.utc)


def token_out(t: Token) -> TokenOut:
    return TokenOut(
        id=t.id,
        name=t.name,
        role=t.role,  # type: ignore[arg-type]
        prefix=t.prefix,
        created_at=aware(t.created_at),  # type: ignore[arg-type]
        revoked_at=aware(t.revoked_at),
    )


def policy_out(p: Policy) -> PolicyOut:
    from memgauge.gate import parse_budget

    limits = [
        LimitOut(
            key=limit.key,
            metric=limit.metric,
            phase=limit.phase,
            value=limit.value,
            unit=limit.unit,
            lower=limit.lower,
        )
        for limit in parse_budget(p.budget, source=f"policy {p.name}")
    ]
    return PolicyOut(
        name=p.name,
        budget=p.budget,
        description=p.description,
        prove=bool(p.prove),
        allow_unmeasured=bool(p.allow_unmeasured),
        machine=p.machine,
        rule=p.rule,  # type: ignore[arg-type]
        limits=limits,
        created_at=aware(p.created_at),  # type: ignore[arg-type]
        updated_at=aware(p.updated_at),  # type: ignore[arg-type]
    )


def submission_out(s: Submission, base: str = "/api/v1") -> SubmissionOut:
    here = f"{base}/submissions/{s.id}"
    return SubmissionOut(
        id=s.id,
        owner=s.owner_id,
        policy=s.policy,
        budget=s.budget,
        filename=s.filename,
        kind=s.kind,  # type: ignore[arg-type]
        entry=s.entry,
        args=json.loads(s.args),
        upload_bytes=s.upload_bytes,
        status=s.status,  # type: ignore[arg-type]
        verdict=s.verdict,  # type: ignore[arg-type]
        reason=s.reason,
        created_at=aware(s.created_at),  # type: ignore[arg-type]
        started_at=aware(s.started_at),
        finished_at=aware(s.finished_at),
        attempts=s.attempts,
        peak_rss_bytes=s.peak_rss_bytes,
        wall_seconds=s.wall_seconds,
        exit_code=s.exit_code,
        sandbox=None if s.sandbox is None else json.loads(s.sandbox),
        prove=bool(s.prove),
        allow_unmeasured=bool(s.allow_unmeasured),
        proof=proof_out(s.proof),
        machine=s.machine,
        admission=admission_out(s),
        links=Links(
            self=here,
            verdict=here + "/verdict",
            profile=here + "/profile",
            report=here + "/report",
            output=here + "/output",
            cancel=here + "/cancel",
            release=here + "/release",
        ),
    )


def proof_out(text: str | None) -> ProofOut | None:
    """The stored proof; None when there is none, or it cannot be read (a row written by hand)."""
    if not text:
        return None
    try:
        return ProofOut.model_validate_json(text)
    except ValueError:
        return None


def admission_out(s: Submission) -> AdmissionOut | None:
    """The stored admission; None when there is none, or it cannot be read (a row written by hand)."""
    if not s.admission:
        return None
    try:
        record = json.loads(s.admission)
        return AdmissionOut(
            **{k: record[k] for k in AdmissionOut.model_fields if k in record},
            held=bool(s.held),
            released_at=aware(s.released_at),
        )
    except (ValueError, TypeError):
        return None


def machine_out(machine: Machine, held: list[Submission], viewer: Token) -> MachineOut:
    from memgauge.service._rules import may_see

    shares = [
        ShareOut(
            submission=s.id if may_see(viewer, s) else None,
            policy=s.policy,
            share_bytes=s.share_bytes or 0,
            admitted_at=aware(s.finished_at),
        )
        for s in held
    ]
    total = sum(share.share_bytes for share in shares)
    return MachineOut(
        name=machine.name,
        memory_bytes=machine.memory_bytes,
        cores=machine.cores,
        description=machine.description,
        held_bytes=total,
        free_bytes=machine.memory_bytes - total,
        shares=shares,
        created_at=aware(machine.created_at),  # type: ignore[arg-type]
        updated_at=aware(machine.updated_at),  # type: ignore[arg-type]
    )
