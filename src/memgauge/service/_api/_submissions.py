"""``/submissions``: submitting a program, and what its run left (the verdict, the profile, the
report, the output). A submitter sees its own submissions only; an admin sees every one."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, HTTPException, Query, Request, UploadFile
from fastapi import Path as Path_
from fastapi.responses import HTMLResponse, PlainTextResponse, Response

from memgauge.service import _policies as policy_store
from memgauge.service import _store as store
from memgauge.service._api._common import (
    ERRORS,
    INVALID,
    UNREADABLE,
    Responses,
    User,
    database,
    settings,
    visible,
)
from memgauge.service._judge import report_html
from memgauge.service._models import Submission, Token
from memgauge.service._rules import (
    MAX_ID,
    MAX_OFFSET,
    MAX_PAGE_SIZE,
    PAGE_SIZE,
    POLICY_NAME,
    SUBMISSION_ID,
    arguments,
    entry_error,
    filename_error,
    is_policy_name,
    listed_owner,
    quota_error,
)
from memgauge.service._schemas import (
    ErrorOut,
    Status,
    SubmissionOut,
    SubmissionPage,
    VerdictName,
    submission_out,
)

router = APIRouter()
SubmissionId = Annotated[str, Path_(pattern=SUBMISSION_ID)]
_MISSING: Responses = {
    404: {"model": ErrorOut, "description": "no such submission (or not yours)"},
    **INVALID,
}
_NOT_YET: Responses = {409: {"model": ErrorOut, "description": "the run has not produced it (yet)"}}


@router.post(
    "/submissions",
    response_model=SubmissionOut,
    status_code=201,
    tags=["submissions"],
    responses={
        413: {"model": ErrorOut, "description": "the upload is over the limit"},
        429: {"model": ErrorOut, "description": "over the token's quota (submissions waiting, bytes kept)"},
        **INVALID,
        **UNREADABLE,
    },
)
async def submit(
    request: Request,
    token: User,
    file: Annotated[UploadFile, File(description="a .py file, or a .zip / .tar.gz project")],
    policy: Annotated[str, Form(description="the policy to judge the run by")],
    entry: Annotated[
        str | None, Form(description="an archive's entry point (default main.py, or its only .py)")
    ] = None,
    args: Annotated[str, Form(description="the program's arguments, a JSON array of strings")] = "[]",
) -> SubmissionOut:
    """Submit a program. It is stored before this answers; it runs when a worker is free."""
    from starlette.concurrency import run_in_threadpool

    data = await _read_limited(file, settings(request).max_upload_bytes)
    # the checks (an archive is decompressed to be counted) and the database are blocking work:
    # on the event loop they would hold up every other request meanwhile
    name = file.filename or "upload"
    sub = await run_in_threadpool(_accept, request, token, data, name, policy, entry, args)
    request.app.state.dispatcher.wake()
    return submission_out(sub)


def _accept(
    request: Request, token: Token, data: bytes, name: str, policy: str, entry: str | None, args: str
) -> Submission:
    """The upload checked and stored, or the HTTPException that says why not."""
    from memgauge.isolation import UploadError, UploadLimits, inspect_upload, resolve_entry, safe_py_name

    s = settings(request)
    db = database(request)
    try:
        program_args = arguments(args)
    except ValueError as e:
        raise HTTPException(422, str(e)) from None
    chosen = policy_store.get_policy(db, policy) if is_policy_name(policy) else None
    if chosen is None:
        raise HTTPException(422, f"no policy {policy!r}: GET /api/v1/policies lists them")
    error = filename_error(name)
    if error is not None:
        raise HTTPException(422, error)
    try:
        info = inspect_upload(name, data, UploadLimits(max_upload_bytes=s.max_upload_bytes))
        if info.kind == "py":
            name = safe_py_name(name)
        program = resolve_entry(info, entry) if info.kind != "py" else name
    except UploadError as e:
        raise HTTPException(422, str(e)) from None
    if info.kind == "py" and entry not in (None, "", name):
        raise HTTPException(422, f"entry: a .py upload is its own entry point ({name}), not {entry!r}")
    error = entry_error(program)
    if error is not None:
        raise HTTPException(422, error)

    def admit(usage: store.Usage) -> str | None:
        return quota_error(usage, len(data), s.max_queued, s.max_stored_bytes)

    try:
        return store.add_submission(
            db,
            store.NewSubmission(
                owner_id=token.id,
                policy=chosen.name,
                budget=chosen.budget,
                filename=name,
                kind=info.kind,
                entry=program,
                args=program_args,
                upload=data,
                prove=chosen.prove,
                allow_unmeasured=chosen.allow_unmeasured,
                machine=chosen.machine,
                admit_rule=chosen.rule if chosen.machine is not None else None,
            ),
            admit,
        )
    except store.AdmissionError as e:
        raise HTTPException(429, str(e)) from None


async def _read_limited(file: UploadFile, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while chunk := await file.read(1 << 20):
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"the upload is over the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


@router.get("/submissions", response_model=SubmissionPage, tags=["submissions"], responses=INVALID)
def list_submissions(
    request: Request,
    token: User,
    status: Status | None = None,
    verdict: VerdictName | None = None,
    policy: Annotated[str | None, Query(pattern=POLICY_NAME)] = None,
    owner: Annotated[int | None, Query(ge=1, le=MAX_ID, description="a token id (admins)")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = PAGE_SIZE,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> SubmissionPage:
    """Newest first. A submitter sees its own only (``owner`` is then ignored)."""
    page = store.list_submissions(
        database(request),
        owner_id=listed_owner(token, owner),
        status=status,
        verdict=verdict,
        policy=policy,
        limit=limit,
        offset=offset,
    )
    return SubmissionPage(
        items=[submission_out(s) for s in page.items], total=page.total, limit=limit, offset=offset
    )


def _json_errors(responses: Responses) -> Responses:
    """The error answers of a route whose own answer is not JSON (HTML, text): FastAPI documents a
    ``model`` under the route's media type, but errors are JSON. The router's (401, 403, 413) are
    repeated here so that these replace them."""
    out: Responses = {}
    for code, given in {**ERRORS, **responses}.items():
        spec = dict(given)
        model = spec.pop("model", None)
        if model is not None:
            ref = {"$ref": f"#/components/schemas/{model.__name__}"}
            spec["content"] = {"application/json": {"schema": ref}}
        out[code] = spec
    return out


@router.get("/submissions/{sub_id}", response_model=SubmissionOut, tags=["submissions"], responses=_MISSING)
def get_submission(request: Request, sub_id: SubmissionId, token: User) -> SubmissionOut:
    return submission_out(visible(request, token, sub_id))


@router.get(
    "/submissions/{sub_id}/verdict",
    tags=["submissions"],
    responses={
        **_MISSING,
        **_NOT_YET,
        200: {"description": "the gate's verdict (as memgauge check --format json)"},
    },
)
def get_verdict(request: Request, sub_id: SubmissionId, token: User) -> dict[str, Any]:
    sub = visible(request, token, sub_id)
    if sub.verdict_json is None:
        raise HTTPException(409, f"submission {sub_id} has no verdict ({sub.status})")
    verdict: dict[str, Any] = json.loads(sub.verdict_json)
    return verdict


@router.get(
    "/submissions/{sub_id}/profile",
    tags=["submissions"],
    responses={**_MISSING, **_NOT_YET, 200: {"description": "the run's profile (docs/profile-schema.md)"}},
)
def get_profile(request: Request, sub_id: SubmissionId, token: User) -> Response:
    sub = visible(request, token, sub_id)
    if sub.profile is None:
        raise HTTPException(409, f"submission {sub_id} has no profile ({sub.status})")
    return Response(sub.profile, media_type="application/json")


@router.get(
    "/submissions/{sub_id}/report",
    response_class=HTMLResponse,
    tags=["submissions"],
    responses=_json_errors({**_MISSING, **_NOT_YET}),
)
def get_report(request: Request, sub_id: SubmissionId, token: User) -> HTMLResponse:
    """The run's HTML report (one offline page)."""
    sub = visible(request, token, sub_id)
    if sub.profile is None:
        raise HTTPException(409, f"submission {sub.id} has no profile ({sub.status})")
    return HTMLResponse(report_html(sub.profile))


@router.get(
    "/submissions/{sub_id}/output",
    response_class=PlainTextResponse,
    tags=["submissions"],
    responses=_json_errors(_MISSING),
)
def get_output(request: Request, sub_id: SubmissionId, token: User) -> PlainTextResponse:
    """The end of the program's output (stdout and stderr together)."""
    return PlainTextResponse(visible(request, token, sub_id).output_tail or "")


@router.post(
    "/submissions/{sub_id}/cancel",
    response_model=SubmissionOut,
    tags=["submissions"],
    responses={**_MISSING, 409: {"model": ErrorOut, "description": "it has finished already"}},
)
def cancel(request: Request, sub_id: SubmissionId, token: User) -> SubmissionOut:
    """Cancel a queued submission at once, or a running one as soon as its worker stops it."""
    sub = visible(request, token, sub_id)
    if sub.status in store.FINISHED:
        raise HTTPException(409, f"submission {sub_id} has finished ({sub.status})")
    updated = store.request_cancel(database(request), sub_id)
    request.app.state.dispatcher.wake()
    return submission_out(updated or sub)


@router.post(
    "/submissions/{sub_id}/release",
    response_model=SubmissionOut,
    tags=["submissions"],
    responses={**_MISSING, 409: {"model": ErrorOut, "description": "it holds no share of a machine"}},
)
def release(request: Request, sub_id: SubmissionId, token: User) -> SubmissionOut:
    """Free the share of its machine an admitted submission holds: later admissions judge without it."""
    from memgauge.service import _machines as machines

    sub = visible(request, token, sub_id)
    db = database(request)
    if not machines.release(db, sub_id):
        raise HTTPException(409, f"submission {sub_id} holds no share of a machine")
    return submission_out(store.get_submission(db, sub_id) or sub)
