"""What the server does with a request before any route reads its body: no one without a token may
make it read, hold or spool a single byte, and no body is read past its route's limit.

- ``BodyGuard`` (ASGI middleware): an API request that carries a body (a ``Content-Length``
  above 0, or any ``Transfer-Encoding``, such as chunked) is answered 401 from its headers alone
  unless its bearer token is valid; nothing of the body is read. FastAPI reads a route's body
  before it solves the route's dependencies (the token check among them), so without this an
  unauthenticated multipart upload would be parsed and spooled to disk before its 401.
- then every body is limited by Starlette's ``RequestBodyLimitMiddleware``: bytes are counted as
  they arrive, whatever the headers say (a ``Content-Length`` over the limit is refused unread),
  and reading stops at the limit with a 413 (``too_large`` words it as the API documents errors).
  An upload is held in memory once read (at most the limit); python-multipart spools the file part
  past 1 MiB to a temporary file, which the limit bounds too.

Both refusals close the connection: the client may still be sending, and what it sends is then not
read at all instead of being read and dropped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.datastructures import Headers
from starlette.middleware.body_limit import MAX_BODY_SIZE_SCOPE_KEY, RequestBodyLimitMiddleware
from starlette.responses import JSONResponse

from memgauge._units import format_bytes

if TYPE_CHECKING:
    from fastapi import Request
    from starlette.exceptions import HTTPException
    from starlette.types import ASGIApp, Receive, Scope, Send

    from memgauge.service._db import Database

# every body but an upload's: policies, tokens, the web UI's forms (a policy's budget and
# description are at most 2000 characters each)
SMALL_BODY_BYTES = 64 << 10
# what a multipart body may add to the file it carries (boundaries, part headers, the form fields)
MULTIPART_SLACK = 1 << 20
_CLOSE = {"Connection": "close"}
UPLOAD_PATH = "/api/v1/submissions"


def carries_body(headers: Headers) -> bool:
    length = headers.get("content-length")
    if headers.get("transfer-encoding") is not None:
        return True
    return length is not None and length.strip() not in ("", "0")


def bearer(headers: Headers) -> str | None:
    scheme, _, secret = (headers.get("authorization") or "").partition(" ")
    return secret.strip() or None if scheme.lower() == "bearer" else None


class BodyGuard:
    """ASGI middleware: answers 401, unread, an API request with a body and no valid token, and
    limits every body as it streams: ``upload_bytes`` (the upload limit and the multipart
    envelope) for a submission, ``SMALL_BODY_BYTES`` for any other request. The database is looked
    up on the app's state per request: it exists only once the app started."""

    def __init__(self, app: ASGIApp, upload_bytes: int) -> None:
        self.app = app
        self.upload = RequestBodyLimitMiddleware(app, upload_bytes + MULTIPART_SLACK)
        self.small = RequestBodyLimitMiddleware(app, SMALL_BODY_BYTES)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        headers = Headers(scope=scope)
        if path.startswith("/api/") and carries_body(headers):
            secret = bearer(headers)
            why = "a token is needed: Authorization: Bearer mg_..."
            if secret is not None:
                why = "this token is not valid (unknown or revoked)"
            if secret is None or not await _valid(scope["app"].state.db, secret):
                response = JSONResponse(
                    {"detail": why}, status_code=401, headers={"WWW-Authenticate": "Bearer", **_CLOSE}
                )
                await response(scope, receive, send)
                return
        upload = scope.get("method") == "POST" and path.rstrip("/") == UPLOAD_PATH
        limiter = self.upload if upload else self.small
        length = headers.get("content-length", "").strip()
        if length.isdigit() and int(length) > limiter.max_body_size:
            # refused unread, in the API's words (Starlette's own answer here is plain text)
            await _too_large(limiter.max_body_size)(scope, receive, send)
            return
        await limiter(scope, receive, send)


async def _valid(db: Database, secret: str) -> bool:
    from starlette.concurrency import run_in_threadpool

    from memgauge.service import _store as store

    return await run_in_threadpool(store.find_token, db, secret) is not None


def _too_large(limit: int) -> JSONResponse:
    detail = f"the request's body is over the limit of {limit} bytes ({format_bytes(limit)}) for this route"
    return JSONResponse({"detail": detail}, status_code=413, headers=_CLOSE)


def too_large(request: Request, exc: HTTPException) -> JSONResponse:
    """A 413: Starlette's ("Content Too Large", the body passed its limit as it streamed) in the
    API's words, with the limit; a route's own as it is."""
    limit = request.scope.get(MAX_BODY_SIZE_SCOPE_KEY)
    if exc.detail == "Content Too Large" and isinstance(limit, int):
        return _too_large(limit)
    return JSONResponse({"detail": str(exc.detail)}, status_code=413, headers=_CLOSE)
