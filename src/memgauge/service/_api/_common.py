"""What every route of the API shares: the token checks (FastAPI dependencies), the error answers
it documents, and the server's state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from memgauge.service import _store as store
from memgauge.service._models import Submission, Token
from memgauge.service._rules import is_admin, may_see
from memgauge.service._schemas import ErrorOut, ValidationErrorOut

if TYPE_CHECKING:
    from memgauge.service._db import Database
    from memgauge.service._settings import Settings

Responses = dict[int | str, dict[str, Any]]
# every request: the server refuses a body over the upload limit before reading it (_app.py)
TOO_LARGE: Responses = {
    413: {"model": ErrorOut, "description": "the request's body is over the upload limit"}
}
ERRORS: Responses = {
    401: {"model": ErrorOut, "description": "no token, or not a valid one"},
    403: {"model": ErrorOut, "description": "the token's role may not do this"},
    **TOO_LARGE,
}
# every route with parameters or a body (FastAPI's own 422 document has another shape: _app.py)
INVALID: Responses = {
    422: {"model": ValidationErrorOut, "description": "a parameter or the body is not valid"}
}
# every route with a body: FastAPI refuses one it cannot parse (not UTF-8 JSON, a broken form)
UNREADABLE: Responses = {
    400: {"model": ErrorOut, "description": "the body cannot be parsed (JSON, or a multipart form)"}
}

_bearer = HTTPBearer(auto_error=False, description="an API token: mg_...")


def database(request: Request) -> Database:
    db: Database = request.app.state.db
    return db


def settings(request: Request) -> Settings:
    value: Settings = request.app.state.settings
    return value


def authenticated(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> Token:
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise HTTPException(
            401, "a token is needed: Authorization: Bearer mg_...", {"WWW-Authenticate": "Bearer"}
        )
    token = store.find_token(database(request), credentials.credentials)
    if token is None:
        raise HTTPException(
            401, "this token is not valid (unknown or revoked)", {"WWW-Authenticate": "Bearer"}
        )
    return token


def admin(token: Annotated[Token, Depends(authenticated)]) -> Token:
    if not is_admin(token):
        raise HTTPException(403, "only an admin token may do this")
    return token


User = Annotated[Token, Depends(authenticated)]
Admin = Annotated[Token, Depends(admin)]


def visible(request: Request, token: Token, sub_id: str) -> Submission:
    """The submission ``sub_id`` as ``token`` may see it: another's is not found, as a missing one."""
    sub = store.get_submission(database(request), sub_id)
    if sub is None or not may_see(token, sub):
        raise HTTPException(404, f"no submission {sub_id}")
    return sub
