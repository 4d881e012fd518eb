"""The HTTP API (``/api/v1``), documented by its OpenAPI schema at ``/openapi.json``.

Every route but ``/healthz`` needs a token (``Authorization: Bearer mg_...``). Submitters see and
cancel their own submissions; admins see every submission and manage policies and tokens.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Depends, File, Form, HTTPException, Query, Request, Response, UploadFile
from fastapi import Path as Path_
from fastapi.responses import HTMLResponse, PlainTextResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from memgauge.service import _store as store
from memgauge.service._models import Submission, Token
from memgauge.service._schemas import (
    ErrorOut,
    Health,
    Me,
    NewTokenOut,
    PolicyIn,
    PolicyOut,
    Status,
    SubmissionOut,
    SubmissionPage,
    TokenIn,
    TokenOut,
    ValidationErrorOut,
    VerdictName,
    policy_out,
    submission_out,
    token_out,
)

if TYPE_CHECKING:
    from memgauge.service._db import Database
    from memgauge.service._settings import Settings

POLICY_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$"
SUBMISSION_ID = r"^[0-9a-f]{32}$"
# what the submissions table holds (_models.py): PostgreSQL refuses longer text, or any NUL, with an
# error, so such uploads are refused here (on every database alike)
_MAX_FILENAME = 255
_MAX_ENTRY = 1000
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_Responses = dict[int | str, dict[str, Any]]
# every request: the server refuses a body over the upload limit before reading it (_app.py)
_TOO_LARGE: _Responses = {
    413: {"model": ErrorOut, "description": "the request's body is over the upload limit"}
}
_ERRORS: _Responses = {
    401: {"model": ErrorOut, "description": "no token, or not a valid one"},
    403: {"model": ErrorOut, "description": "the token's role may not do this"},
    **_TOO_LARGE,
}
# every route with parameters or a body (FastAPI's own 422 document has another shape: _app.py)
_INVALID: _Responses = {
    422: {"model": ValidationErrorOut, "description": "a parameter or the body is not valid"}
}
# every route with a body: FastAPI refuses one it cannot parse (not UTF-8 JSON, a broken form)
_UNREADABLE: _Responses = {
    400: {"model": ErrorOut, "description": "the body cannot be parsed (JSON, or a multipart form)"}
}

_bearer = HTTPBearer(auto_error=False, description="an API token: mg_...")


def _db(request: Request) -> Database:
    db: Database = request.app.state.db
    return db


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def authenticated(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> Token:
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise HTTPException(
            401, "a token is needed: Authorization: Bearer mg_...", {"WWW-Authenticate": "Bearer"}
        )
    token = store.find_token(_db(request), credentials.credentials)
    if token is None:
        raise HTTPException(
            401, "this token is not valid (unknown or revoked)", {"WWW-Authenticate": "Bearer"}
        )
    return token


def admin(token: Annotated[Token, Depends(authenticated)]) -> Token:
    if token.role != "admin":
        raise HTTPException(403, "only an admin token may do this")
    return token


User = Annotated[Token, Depends(authenticated)]
Admin = Annotated[Token, Depends(admin)]
router = APIRouter(prefix="/api/v1", responses=_ERRORS)
health_router = APIRouter(responses=_TOO_LARGE)


@health_router.get("/healthz", response_model=Health, tags=["service"])
def health(request: Request) -> Health:
    """Whether the server answers (no token needed; says nothing about submissions)."""
    from memgauge import __version__

    settings = _settings(request)
    return Health(
        status="ok",
        version=__version__,
        engine=settings.engine,
        workers=settings.workers,
        in_flight=request.app.state.dispatcher.in_flight,
    )


@router.get("/me", response_model=Me, tags=["tokens"])
def me(token: User) -> Me:
    """The token's own name and role."""
    return Me(id=token.id, name=token.name, role=token.role)  # type: ignore[arg-type]


# -- tokens ----------------------------------------------------------------------------------------


@router.get("/tokens", response_model=list[TokenOut], tags=["tokens"])
def list_tokens(request: Request, _: Admin) -> list[TokenOut]:
    return [token_out(t) for t in store.list_tokens(_db(request))]


@router.post(
    "/tokens",
    response_model=NewTokenOut,
    status_code=201,
    tags=["tokens"],
    responses={**_INVALID, **_UNREADABLE},
)
def create_token(request: Request, body: TokenIn, _: Admin) -> NewTokenOut:
    """A new token; its secret is in this answer only."""
    token, secret = store.create_token(_db(request), body.name, body.role)
    return NewTokenOut(**token_out(token).model_dump(), token=secret)


@router.delete(
    "/tokens/{token_id}",
    status_code=204,
    tags=["tokens"],
    responses={404: {"model": ErrorOut}, 409: {"model": ErrorOut}, **_INVALID},
)
def revoke_token(request: Request, token_id: Annotated[int, Path_(ge=1, le=2**31 - 1)], _: Admin) -> Response:
    """Revoke a token (its submissions stay). The last admin token cannot be revoked."""
    db = _db(request)
    token = store.get_token(db, token_id)
    if token is None:
        raise HTTPException(404, f"no token {token_id}")
    if token.role == "admin" and token.revoked_at is None:
        admins = [t for t in store.list_tokens(db) if t.role == "admin" and t.revoked_at is None]
        if len(admins) <= 1:
            raise HTTPException(409, "this is the last admin token: make another admin token first")
    store.revoke_token(db, token_id)
    return Response(status_code=204)


# -- policies --------------------------------------------------------------------------------------

PolicyName = Annotated[str, Path_(pattern=POLICY_NAME)]


@router.get("/policies", response_model=list[PolicyOut], tags=["policies"])
def list_policies(request: Request, _: User) -> list[PolicyOut]:
    """Every policy (any token may read them: submitters choose one)."""
    return [policy_out(p) for p in store.list_policies(_db(request))]


@router.get(
    "/policies/{name}",
    response_model=PolicyOut,
    tags=["policies"],
    responses={404: {"model": ErrorOut}, **_INVALID},
)
def get_policy(request: Request, name: PolicyName, _: User) -> PolicyOut:
    policy = store.get_policy(_db(request), name)
    if policy is None:
        raise HTTPException(404, f"no policy {name!r}")
    return policy_out(policy)


@router.put(
    "/policies/{name}",
    response_model=PolicyOut,
    tags=["policies"],
    responses={201: {"model": PolicyOut, "description": "created"}, **_INVALID, **_UNREADABLE},
)
def put_policy(request: Request, response: Response, name: PolicyName, body: PolicyIn, _: Admin) -> PolicyOut:
    """Create or replace a policy. Submissions keep the budget they were judged by."""
    from memgauge.gate import BudgetError, parse_budget

    try:
        budget = parse_budget(body.budget, source="budget")
    except BudgetError as e:
        raise HTTPException(422, str(e)) from None
    if not budget:
        # a policy without limits would pass everything
        raise HTTPException(422, "budget: give at least one limit, e.g. 'rss=512MiB wall=30s'")
    policy, created = store.put_policy(_db(request), name, body.budget, body.description)
    if created:
        response.status_code = 201
    return policy_out(policy)


@router.delete(
    "/policies/{name}", status_code=204, tags=["policies"], responses={404: {"model": ErrorOut}, **_INVALID}
)
def delete_policy(request: Request, name: PolicyName, _: Admin) -> Response:
    if not store.delete_policy(_db(request), name):
        raise HTTPException(404, f"no policy {name!r}")
    return Response(status_code=204)


# -- submissions -----------------------------------------------------------------------------------


@router.post(
    "/submissions",
    response_model=SubmissionOut,
    status_code=201,
    tags=["submissions"],
    responses={
        413: {"model": ErrorOut, "description": "the upload is over the limit"},
        **_INVALID,
        **_UNREADABLE,
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
    from memgauge.isolation import UploadError, UploadLimits, inspect_upload, resolve_entry, safe_py_name

    settings = _settings(request)
    db = _db(request)
    data = await _read_limited(file, settings.max_upload_bytes)
    arguments = _arguments(args)
    chosen = store.get_policy(db, policy) if re.fullmatch(POLICY_NAME, policy) else None
    if chosen is None:
        raise HTTPException(422, f"no policy {policy!r}: GET /api/v1/policies lists them")
    name = file.filename or "upload"
    if len(name) > _MAX_FILENAME or _CONTROL.search(name):
        raise HTTPException(
            422, f"file: a name of at most {_MAX_FILENAME} characters, without control characters"
        )
    try:
        limits = UploadLimits(max_upload_bytes=settings.max_upload_bytes)
        info = inspect_upload(name, data, limits)
        if info.kind == "py":
            name = safe_py_name(name)
        program = resolve_entry(info, entry if info.kind != "py" else None) if info.kind != "py" else name
    except UploadError as e:
        raise HTTPException(422, str(e)) from None
    if info.kind == "py" and entry not in (None, "", name):
        raise HTTPException(422, f"entry: a .py upload is its own entry point ({name}), not {entry!r}")
    if len(program) > _MAX_ENTRY:
        raise HTTPException(422, f"entry: a path of at most {_MAX_ENTRY} characters")
    sub = store.add_submission(
        db,
        store.NewSubmission(
            owner_id=token.id,
            policy=chosen.name,
            budget=chosen.budget,
            filename=name,
            kind=info.kind,
            entry=program,
            args=arguments,
            upload=data,
        ),
    )
    request.app.state.dispatcher.wake()
    return submission_out(sub)


async def _read_limited(file: UploadFile, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while chunk := await file.read(1 << 20):
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"the upload is over the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _arguments(text: str) -> list[str]:
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, list) or not all(isinstance(a, str) and "\0" not in a for a in value):
        raise HTTPException(422, 'args: a JSON array of strings, e.g. ["--rows", "1000"]')
    if len(value) > 1000 or sum(len(a) for a in value) > 100_000:
        raise HTTPException(422, "args: too many or too long (1000 arguments, 100000 characters)")
    return value


@router.get("/submissions", response_model=SubmissionPage, tags=["submissions"], responses=_INVALID)
def list_submissions(
    request: Request,
    token: User,
    status: Status | None = None,
    verdict: VerdictName | None = None,
    policy: Annotated[str | None, Query(pattern=POLICY_NAME)] = None,
    owner: Annotated[int | None, Query(ge=1, le=2**31 - 1, description="a token id (admins)")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
) -> SubmissionPage:
    """Newest first. A submitter sees its own only (``owner`` is then ignored)."""
    owner_id = owner if token.role == "admin" else token.id
    page = store.list_submissions(
        _db(request),
        owner_id=owner_id,
        status=status,
        verdict=verdict,
        policy=policy,
        limit=limit,
        offset=offset,
    )
    return SubmissionPage(
        items=[submission_out(s) for s in page.items], total=page.total, limit=limit, offset=offset
    )


SubmissionId = Annotated[str, Path_(pattern=SUBMISSION_ID)]
_MISSING: _Responses = {
    404: {"model": ErrorOut, "description": "no such submission (or not yours)"},
    **_INVALID,
}
_NOT_YET: _Responses = {409: {"model": ErrorOut, "description": "the run has not produced it (yet)"}}


def _json_errors(responses: _Responses) -> _Responses:
    """The error answers of a route whose own answer is not JSON (HTML, text): FastAPI documents a
    ``model`` under the route's media type, but errors are JSON. The router's (401, 403, 413) are
    repeated here so that these replace them."""
    out: _Responses = {}
    for code, given in {**_ERRORS, **responses}.items():
        spec = dict(given)
        model = spec.pop("model", None)
        if model is not None:
            ref = {"$ref": f"#/components/schemas/{model.__name__}"}
            spec["content"] = {"application/json": {"schema": ref}}
        out[code] = spec
    return out


def visible(request: Request, token: Token, sub_id: str) -> Submission:
    sub = store.get_submission(_db(request), sub_id)
    if sub is None or (token.role != "admin" and sub.owner_id != token.id):
        raise HTTPException(404, f"no submission {sub_id}")
    return sub


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
    return HTMLResponse(report_html(visible(request, token, sub_id)))


def report_html(sub: Submission) -> str:
    from memgauge.model import Profile
    from memgauge.render import HtmlRenderer

    if sub.profile is None:
        raise HTTPException(409, f"submission {sub.id} has no profile ({sub.status})")
    return HtmlRenderer().render(Profile.from_dict(json.loads(sub.profile)))


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
    updated = store.request_cancel(_db(request), sub_id)
    request.app.state.dispatcher.wake()
    return submission_out(updated or sub)
