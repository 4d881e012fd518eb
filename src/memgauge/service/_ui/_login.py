"""Signing in and out (``/login``, ``/logout``), and where ``/`` and ``/ui`` lead."""

from __future__ import annotations

from typing import Annotated

from fastapi import Form, Request, Response
from fastapi.responses import RedirectResponse

from memgauge.service import _store as store
from memgauge.service._ui._render import error_page, page_router, render
from memgauge.service._ui._session import (
    COOKIE,
    MAX_TOKEN_CHARS,
    Csrf,
    check_csrf,
    database,
    from_other_site,
    token_from_cookie,
)

router = page_router()


def _safe_next(value: str | None) -> str:
    # only a page of the UI: never another host, nor a scheme-relative "//host"
    if value and value.startswith("/ui/") and "\\" not in value and not value.startswith("//"):
        return value
    return "/ui/submissions"


@router.get("/")
def home(request: Request) -> Response:
    target = "/ui/submissions" if token_from_cookie(request) is not None else "/login"
    return RedirectResponse(target, status_code=303)


@router.get("/ui")
@router.get("/ui/")
def ui_home() -> Response:
    return RedirectResponse("/ui/submissions", status_code=303)


@router.get("/login")
def login_form(request: Request, next: str | None = None) -> Response:
    if token_from_cookie(request) is not None:
        return RedirectResponse(_safe_next(next), status_code=303)
    return render(request, "login.html", {"error": None, "next": _safe_next(next)})


@router.post("/login")
def login(
    request: Request,
    token: Annotated[str, Form(max_length=MAX_TOKEN_CHARS)] = "",
    next: Annotated[str, Form(max_length=2000)] = "",
) -> Response:
    if from_other_site(request):
        return error_page(request, 403, "this form was sent from another site: refused")
    secret = token.strip()
    found = store.find_token(database(request), secret) if secret else None
    if found is None:
        return render(
            request,
            "login.html",
            {"error": "This token is not valid (unknown or revoked).", "next": _safe_next(next)},
            401,
        )
    response = RedirectResponse(_safe_next(next), status_code=303)
    response.set_cookie(
        COOKIE,
        secret,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


@router.post("/logout")
def logout(request: Request, csrf: Csrf = "") -> Response:
    if token_from_cookie(request) is not None:
        check_csrf(request, csrf)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(
        COOKIE, path="/", httponly=True, samesite="strict", secure=request.url.scheme == "https"
    )
    return response
