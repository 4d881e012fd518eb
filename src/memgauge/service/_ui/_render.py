"""What every answer of the UI gets: the pages rendered from the Jinja2 templates (autoescaped),
errors as HTML pages, a missing session as a redirect to the login page, and the security headers.

Every page gets a Content-Security-Policy without inline script, ``X-Frame-Options: DENY``,
``nosniff``, ``no-referrer`` and ``no-store``. A run's HTML report is served under its own policy
(``REPORT_CSP``: its inline scripts, no network, a sandboxed origin) and may be framed by the UI
only.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Coroutine, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.routing import APIRoute

from memgauge._units import format_bytes, format_seconds
from memgauge.service._models import Token
from memgauge.service._ui._session import COOKIE, LoginNeededError, csrf_value

if TYPE_CHECKING:
    from jinja2 import Environment

_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-src 'self'; frame-ancestors 'none'"
)
# the report's own policy (see render._html_page), framed by the UI only, and in an origin of its
# own even when opened full-page: nothing it runs can reach the UI's cookie-authenticated pages
REPORT_CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'self'; sandbox allow-scripts"
)
_STATIC = {"ui.css": "text/css; charset=utf-8", "ui.js": "text/javascript; charset=utf-8"}
_TITLES = {400: "Bad request", 401: "Not signed in", 403: "Not allowed", 404: "Not found", 409: "Conflict"}


class UiRoute(APIRoute):
    """Every UI answer gets the security headers; a missing session redirects to the login page;
    errors are HTML pages, not the API's JSON."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            try:
                response = await handler(request)
            except LoginNeededError as e:
                query = urlencode({"next": e.next_path}) if e.next_path != "/ui/submissions" else ""
                response = RedirectResponse("/login" + ("?" + query if query else ""), status_code=303)
            except HTTPException as e:
                response = error_page(request, e.status_code, str(e.detail))
            except RequestValidationError as e:
                response = error_page(request, 400, _validation_text(e))
            _secure(response)
            return response

        return route


def page_router() -> APIRouter:
    """A router of UI pages: out of the API's schema, every answer through :class:`UiRoute`."""
    return APIRouter(include_in_schema=False, route_class=UiRoute)


def _validation_text(e: RequestValidationError) -> str:
    parts = []
    for err in e.errors()[:5]:
        where = ".".join(str(x) for x in err.get("loc", ()) if x not in ("body", "query", "path"))
        parts.append(f"{where}: {err.get('msg', 'not valid')}" if where else str(err.get("msg", "")))
    return "this request is not valid: " + "; ".join(parts)


def _secure(response: Response) -> None:
    headers = response.headers
    headers.setdefault("Content-Security-Policy", _CSP)
    headers.setdefault("X-Frame-Options", "DENY")
    headers.setdefault("X-Content-Type-Options", "nosniff")
    headers.setdefault("Referrer-Policy", "no-referrer")
    headers.setdefault("Cache-Control", "no-store")


@cache
def _templates() -> Environment:
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(
        loader=PackageLoader("memgauge.service", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        bytes=lambda n: "—" if n is None else format_bytes(n),
        seconds=lambda s: "—" if s is None else format_seconds(s),
        when=_when,
        iso=lambda t: "" if t is None else _aware(t).isoformat(),
    )
    return env


def _aware(t: dt.datetime) -> dt.datetime:
    # SQLite hands back naive datetimes; every time stored is UTC
    return t if t.tzinfo is not None else t.replace(tzinfo=dt.timezone.utc)


def _when(t: dt.datetime | None) -> str:
    if t is None:
        return "—"
    return _aware(t).astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def render(request: Request, template: str, context: Mapping[str, Any], status: int = 200) -> HTMLResponse:
    """The page ``template`` with ``context``, and what every page shows: who is signed in, the
    session's CSRF value for its forms, the version."""
    from memgauge import __version__

    token: Token | None = getattr(request.state, "ui_token", None)
    secret = request.cookies.get(COOKIE, "")
    html = (
        _templates()
        .get_template(template)
        .render(
            me=token,
            csrf=csrf_value(secret) if token is not None else "",
            version=__version__,
            path=request.url.path,
            **context,
        )
    )
    return HTMLResponse(html, status_code=status)


def error_page(request: Request, status: int, message: str) -> HTMLResponse:
    return render(
        request,
        "error.html",
        {"status": status, "title": _TITLES.get(status, "Error"), "message": message},
        status,
    )


router = page_router()


@router.get("/ui/static/{name}")
def static(name: str) -> Response:
    from importlib.resources import files

    if name not in _STATIC:
        raise HTTPException(404, f"no file {name}")
    data = files("memgauge.service").joinpath("static").joinpath(name).read_bytes()
    return Response(data, media_type=_STATIC[name], headers={"Cache-Control": "public, max-age=3600"})
