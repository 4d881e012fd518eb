"""``/me`` and ``/tokens``: who a token is, and the admins' management of tokens."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Request, Response
from fastapi import Path as Path_

from memgauge.service import _store as store
from memgauge.service._api._common import INVALID, UNREADABLE, Admin, User, database
from memgauge.service._rules import MAX_ID, is_last_admin
from memgauge.service._schemas import ErrorOut, Me, NewTokenOut, TokenIn, TokenOut, token_out

router = APIRouter()


@router.get("/me", response_model=Me, tags=["tokens"])
def me(token: User) -> Me:
    """The token's own name and role."""
    return Me(id=token.id, name=token.name, role=token.role)  # type: ignore[arg-type]


@router.get("/tokens", response_model=list[TokenOut], tags=["tokens"])
def list_tokens(request: Request, _: Admin) -> list[TokenOut]:
    return [token_out(t) for t in store.list_tokens(database(request))]


@router.post(
    "/tokens",
    response_model=NewTokenOut,
    status_code=201,
    tags=["tokens"],
    responses={**INVALID, **UNREADABLE},
)
def create_token(request: Request, body: TokenIn, _: Admin) -> NewTokenOut:
    """A new token; its secret is in this answer only."""
    token, secret = store.create_token(database(request), body.name, body.role)
    return NewTokenOut(**token_out(token).model_dump(), token=secret)


@router.delete(
    "/tokens/{token_id}",
    status_code=204,
    tags=["tokens"],
    responses={404: {"model": ErrorOut}, 409: {"model": ErrorOut}, **INVALID},
)
def revoke_token(request: Request, token_id: Annotated[int, Path_(ge=1, le=MAX_ID)], _: Admin) -> Response:
    """Revoke a token (its submissions stay). The last admin token cannot be revoked."""
    db = database(request)
    token = store.get_token(db, token_id)
    if token is None:
        raise HTTPException(404, f"no token {token_id}")
    if is_last_admin(token, store.list_tokens(db)):
        raise HTTPException(409, "this is the last admin token: make another admin token first")
    store.revoke_token(db, token_id)
    return Response(status_code=204)
