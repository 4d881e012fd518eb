"""Who is signed in, and whether a form is theirs.

Signing in posts a token to ``/login``; the server keeps it in an HttpOnly, SameSite=Strict cookie
(``memgauge_token``, Secure over https) and every ``/ui`` page reads it from there. Pages without a
valid cookie redirect to ``/login``.

CSRF: every form that changes something carries ``csrf``, an HMAC-SHA256 keyed with the session's
token over a fixed label. Only a page served to that session can know it (the cookie is HttpOnly
and the value does not reveal the token), any server sharing the database checks it without a
secret of its own, and it is compared in constant time. A POST whose browser says it came from
another site (``Sec-Fetch-Site``) is refused as well, whatever it carries.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, Form, HTTPException, Request

from memgauge.service import _store as store
from memgauge.service._models import Token
from memgauge.service._rules import is_admin

if TYPE_CHECKING:
    from memgauge.service._db import Database

COOKIE = "memgauge_token"
MAX_TOKEN_CHARS = 500
_CSRF_LABEL = b"memgauge-ui-csrf-v1"


class LoginNeededError(Exception):
    """No valid session: the page answers with a redirect to the login page, back to ``next_path``
    after signing in."""

    def __init__(self, next_path: str) -> None:
        super().__init__(next_path)
        self.next_path = next_path


def database(request: Request) -> Database:
    db: Database = request.app.state.db
    return db


def token_from_cookie(request: Request) -> Token | None:
    secret = request.cookies.get(COOKIE)
    if not secret or len(secret) > MAX_TOKEN_CHARS:
        return None
    return store.find_token(database(request), secret)


def _session(request: Request) -> Token:
    token = token_from_cookie(request)
    if token is None:
        path = request.url.path + ("?" + request.url.query if request.url.query else "")
        raise LoginNeededError(path if request.method == "GET" else "/ui/submissions")
    request.state.ui_token = token
    return token


def _admin_session(token: Annotated[Token, Depends(_session)]) -> Token:
    if not is_admin(token):
        raise HTTPException(403, "only an admin may see this page: sign in with an admin token")
    return token


User = Annotated[Token, Depends(_session)]
Admin = Annotated[Token, Depends(_admin_session)]
Csrf = Annotated[str, Form(max_length=200)]


def csrf_value(secret: str) -> str:
    """The CSRF value of the session whose cookie holds ``secret``."""
    return hmac.new(secret.encode("utf-8", "surrogatepass"), _CSRF_LABEL, hashlib.sha256).hexdigest()


def from_other_site(request: Request) -> bool:
    return request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none")


def check_csrf(request: Request, value: str) -> None:
    """Raises 403 unless ``value`` is the session's CSRF value and the browser did not send the
    form from another site."""
    secret = request.cookies.get(COOKIE, "")
    if from_other_site(request):
        raise HTTPException(403, "this form was sent from another site: refused")
    if not value or not hmac.compare_digest(value.encode(), csrf_value(secret).encode()):
        raise HTTPException(
            403, "this form's CSRF check failed (a stale or forged form): reload the page and try again"
        )
