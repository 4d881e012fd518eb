"""The web UI: server-rendered pages (Jinja2, autoescaped) over the same store as the API.

Signing in posts a token to ``/login``; the server keeps it in an HttpOnly, SameSite=Strict cookie
(``memgauge_token``, Secure over https) and every ``/ui`` page reads it from there. Pages without a
valid cookie redirect to ``/login``.

CSRF: every form that changes something carries ``csrf``, an HMAC-SHA256 keyed with the session's
token over a fixed label. Only a page served to that session can know it (the cookie is HttpOnly
and the value does not reveal the token), any server sharing the database checks it without a
secret of its own, and it is compared in constant time. A POST whose browser says it came from
another site (``Sec-Fetch-Site``) is refused as well, whatever it carries.

Every page gets a Content-Security-Policy without inline script, ``X-Frame-Options: DENY``,
``nosniff``, ``no-referrer`` and ``no-store``. A run's HTML report is served under its own policy
(its inline scripts, no network, a sandboxed origin) and may be framed by the UI only.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import re
import shlex
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.routing import APIRoute

from memgauge._units import format_bytes, format_seconds
from memgauge.service import _store as store
from memgauge.service._models import Policy, Submission, Token

if TYPE_CHECKING:
    from jinja2 import Environment

    from memgauge.service._db import Database

COOKIE = "memgauge_token"
_CSRF_LABEL = b"memgauge-ui-csrf-v1"
_MAX_TOKEN_CHARS = 500
_POLICY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
_SUBMISSION_ID = re.compile(r"[0-9a-f]{32}")
_ACTIVE = (store.QUEUED, store.RUNNING)
_REFRESH_SECONDS = 3
_PAGE_SIZES = (20, 50, 100, 200, 500)

_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-src 'self'; frame-ancestors 'none'"
)
# the report's own policy (see render._html_page), framed by the UI only, and in an origin of its
# own even when opened full-page: nothing it runs can reach the UI's cookie-authenticated pages
_REPORT_CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'self'; sandbox allow-scripts"
)
_STATIC = {"ui.css": "text/css; charset=utf-8", "ui.js": "text/javascript; charset=utf-8"}


# -- what every answer gets ------------------------------------------------------------------------


class _LoginNeededError(Exception):
    def __init__(self, next_path: str) -> None:
        super().__init__(next_path)
        self.next_path = next_path


class _UiRoute(APIRoute):
    """Every UI answer gets the security headers; a missing session redirects to the login page;
    errors are HTML pages, not the API's JSON."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            try:
                response = await handler(request)
            except _LoginNeededError as e:
                query = urlencode({"next": e.next_path}) if e.next_path != "/ui/submissions" else ""
                response = RedirectResponse("/login" + ("?" + query if query else ""), status_code=303)
            except HTTPException as e:
                response = error_page(request, e.status_code, str(e.detail))
            except RequestValidationError as e:
                response = error_page(request, 400, _validation_text(e))
            _secure(response)
            return response

        return route


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


ui_router = APIRouter(include_in_schema=False, route_class=_UiRoute)


# -- sessions and CSRF -----------------------------------------------------------------------------


def _db(request: Request) -> Database:
    db: Database = request.app.state.db
    return db


def _token_from_cookie(request: Request) -> Token | None:
    secret = request.cookies.get(COOKIE)
    if not secret or len(secret) > _MAX_TOKEN_CHARS:
        return None
    return store.find_token(_db(request), secret)


def _session(request: Request) -> Token:
    token = _token_from_cookie(request)
    if token is None:
        path = request.url.path + ("?" + request.url.query if request.url.query else "")
        raise _LoginNeededError(path if request.method == "GET" else "/ui/submissions")
    request.state.ui_token = token
    return token


def _admin_session(token: Annotated[Token, Depends(_session)]) -> Token:
    if token.role != "admin":
        raise HTTPException(403, "only an admin may see this page: sign in with an admin token")
    return token


User = Annotated[Token, Depends(_session)]
Admin = Annotated[Token, Depends(_admin_session)]
Csrf = Annotated[str, Form(max_length=200)]


def csrf_value(secret: str) -> str:
    """The CSRF value of the session whose cookie holds ``secret``."""
    return hmac.new(secret.encode("utf-8", "surrogatepass"), _CSRF_LABEL, hashlib.sha256).hexdigest()


def _from_other_site(request: Request) -> bool:
    return request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none")


def _check_csrf(request: Request, value: str) -> None:
    """Raises 403 unless ``value`` is the session's CSRF value and the browser did not send the
    form from another site."""
    secret = request.cookies.get(COOKIE, "")
    if _from_other_site(request):
        raise HTTPException(403, "this form was sent from another site: refused")
    if not value or not hmac.compare_digest(value.encode(), csrf_value(secret).encode()):
        raise HTTPException(
            403, "this form's CSRF check failed (a stale or forged form): reload the page and try again"
        )


# -- rendering -------------------------------------------------------------------------------------


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


def _render(request: Request, template: str, context: Mapping[str, Any], status: int = 200) -> HTMLResponse:
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
    titles = {400: "Bad request", 401: "Not signed in", 403: "Not allowed", 404: "Not found", 409: "Conflict"}
    return _render(
        request,
        "error.html",
        {"status": status, "title": titles.get(status, "Error"), "message": message},
        status,
    )


@ui_router.get("/ui/static/{name}")
def static(name: str) -> Response:
    from importlib.resources import files

    if name not in _STATIC:
        raise HTTPException(404, f"no file {name}")
    data = files("memgauge.service").joinpath("static").joinpath(name).read_bytes()
    return Response(data, media_type=_STATIC[name], headers={"Cache-Control": "public, max-age=3600"})


# -- signing in and out ----------------------------------------------------------------------------


def _safe_next(value: str | None) -> str:
    # only a page of the UI: never another host, nor a scheme-relative "//host"
    if value and value.startswith("/ui/") and "\\" not in value and not value.startswith("//"):
        return value
    return "/ui/submissions"


@ui_router.get("/")
def home(request: Request) -> Response:
    target = "/ui/submissions" if _token_from_cookie(request) is not None else "/login"
    return RedirectResponse(target, status_code=303)


@ui_router.get("/ui")
@ui_router.get("/ui/")
def ui_home() -> Response:
    return RedirectResponse("/ui/submissions", status_code=303)


@ui_router.get("/login")
def login_form(request: Request, next: str | None = None) -> Response:
    if _token_from_cookie(request) is not None:
        return RedirectResponse(_safe_next(next), status_code=303)
    return _render(request, "login.html", {"error": None, "next": _safe_next(next)})


@ui_router.post("/login")
def login(
    request: Request,
    token: Annotated[str, Form(max_length=_MAX_TOKEN_CHARS)] = "",
    next: Annotated[str, Form(max_length=2000)] = "",
) -> Response:
    if _from_other_site(request):
        return error_page(request, 403, "this form was sent from another site: refused")
    secret = token.strip()
    found = store.find_token(_db(request), secret) if secret else None
    if found is None:
        return _render(
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


@ui_router.post("/logout")
def logout(request: Request, csrf: Csrf = "") -> Response:
    if _token_from_cookie(request) is not None:
        _check_csrf(request, csrf)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(
        COOKIE, path="/", httponly=True, samesite="strict", secure=request.url.scheme == "https"
    )
    return response


# -- submissions -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Filters:
    status: str | None
    verdict: str | None
    policy: str | None
    owner: int | None
    limit: int
    offset: int

    def query(self, **changes: Any) -> str:
        values = {
            "status": self.status,
            "verdict": self.verdict,
            "policy": self.policy,
            "owner": self.owner,
            "limit": self.limit if self.limit != 50 else None,
            "offset": self.offset or None,
        }
        values.update(changes)
        pairs = {k: v for k, v in values.items() if v not in (None, "", 0)}
        return "?" + urlencode(pairs) if pairs else ""


def _choice(name: str, value: str | None, allowed: tuple[str, ...]) -> str | None:
    if not value:
        return None
    if value not in allowed:
        raise HTTPException(400, f"{name}: one of {', '.join(allowed)}, not {value!r}")
    return value


def _number(name: str, value: str | None, default: int, low: int, high: int) -> int:
    if value is None or value == "":
        return default
    if not value.isdigit() or not low <= int(value) <= high:
        raise HTTPException(400, f"{name}: a whole number from {low} to {high}, not {value!r}")
    return int(value)


@ui_router.get("/ui/submissions")
def submissions(
    request: Request,
    token: User,
    status: str | None = None,
    verdict: str | None = None,
    policy: str | None = None,
    owner: str | None = None,
    limit: str | None = None,
    offset: str | None = None,
) -> Response:
    admin = token.role == "admin"
    if policy and len(policy) > 100:
        raise HTTPException(400, "policy: at most 100 characters")
    filters = _Filters(
        status=_choice("status", status, store.STATUSES),
        verdict=_choice("verdict", verdict, store.VERDICTS),
        policy=policy or None,
        owner=(_number("owner", owner, 0, 0, 2**31 - 1) or None) if admin else None,
        limit=_number("limit", limit, 50, 1, 500),
        offset=_number("offset", offset, 0, 0, 10**9),
    )
    db = _db(request)
    page = store.list_submissions(
        db,
        owner_id=filters.owner if admin else token.id,
        status=filters.status,
        verdict=filters.verdict,
        policy=filters.policy,
        limit=filters.limit,
        offset=filters.offset,
    )
    owners = {t.id: t for t in store.list_tokens(db)} if admin else {}
    here = "/ui/submissions"
    prev_link = (
        here + filters.query(offset=max(0, filters.offset - filters.limit)) if filters.offset else None
    )
    more = filters.offset + filters.limit < page.total
    next_link = here + filters.query(offset=filters.offset + filters.limit) if more else None
    return _render(
        request,
        "submissions.html",
        {
            "items": page.items,
            "total": page.total,
            "filters": filters,
            "statuses": store.STATUSES,
            "verdicts": store.VERDICTS,
            "policies": [p.name for p in store.list_policies(db)],
            "owners": owners,
            "page_sizes": _PAGE_SIZES,
            "prev_link": prev_link,
            "next_link": next_link,
            "refresh": _REFRESH_SECONDS if any(s.status in _ACTIVE for s in page.items) else None,
            "first": filters.offset + 1 if page.items else 0,
            "last": filters.offset + len(page.items),
        },
    )


def _visible(request: Request, token: Token, sub_id: str) -> Submission:
    sub = store.get_submission(_db(request), sub_id) if _SUBMISSION_ID.fullmatch(sub_id) else None
    if sub is None or (token.role != "admin" and sub.owner_id != token.id):
        raise HTTPException(404, f"no submission {sub_id}")
    return sub


@dataclass(frozen=True)
class _Check:
    """One limit of a verdict, as the detail page shows it."""

    key: str
    status: str
    limit: str
    measured: str
    margin: str
    note: str


def _amount(value: Any, unit: str) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "—"
    if unit == "bytes":
        return format_bytes(value)
    if unit == "seconds":
        return format_seconds(value)
    return f"{value:g}"


def _checks(verdict_json: str | None) -> list[_Check]:
    if not verdict_json:
        return []
    try:
        results = json.loads(verdict_json).get("results") or []
    except (ValueError, AttributeError):
        return []
    checks = []
    for r in results:
        if not isinstance(r, dict):
            continue
        unit = str(r.get("unit") or "")
        checks.append(
            _Check(
                key=str(r.get("key", "?")),
                status=str(r.get("status", "?")),
                limit=_amount(r.get("limit"), unit) if "limit" in r else str(r.get("text") or "—"),
                measured=_amount(r.get("measured"), unit),
                margin=_amount(r.get("margin"), unit),
                note=str(r.get("note") or ""),
            )
        )
    return checks


@dataclass(frozen=True)
class _Piece:
    """One piece of the sandbox (``memory``, ``network`` ...): whether it held, how or why not,
    and what the run ran into there (a limit it reached)."""

    name: str
    applied: bool
    detail: str
    hit: str


@dataclass(frozen=True)
class _SandboxRecord:
    pieces: list[_Piece]
    other: list[tuple[str, str]]


_RECORD_PARTS = ("hit", "applied", "not_applied")


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, dict, list)) or value is None:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def _pairs(value: Any) -> list[tuple[str, str]]:
    if isinstance(value, dict):
        return [(str(k), _shown(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [(_shown(v), "") for v in value]
    return [] if value is None else [(_shown(value), "")]


def _sandbox(text: str | None) -> _SandboxRecord | None:
    if not text:
        return None
    try:
        record = json.loads(text)
    except ValueError:
        record = text
    if not isinstance(record, dict):
        return _SandboxRecord([], [("record", _shown(record))])
    parts = {part: dict(_pairs(record.get(part))) for part in _RECORD_PARTS}
    from memgauge.isolation import PIECES

    names = list(dict.fromkeys([*parts["applied"], *parts["not_applied"], *parts["hit"]]))
    names.sort(key=lambda n: PIECES.index(n) if n in PIECES else len(PIECES))
    pieces = [
        _Piece(
            name=n,
            applied=n in parts["applied"],
            detail=parts["applied"].get(n) or parts["not_applied"].get(n, ""),
            hit=parts["hit"].get(n, ""),
        )
        for n in names
    ]
    other = [(str(k), _shown(v)) for k, v in record.items() if k not in _RECORD_PARTS]
    return _SandboxRecord(pieces, other)


def _arguments(args: str) -> str:
    try:
        values = json.loads(args)
    except ValueError:
        return args
    return shlex.join(str(a) for a in values) if isinstance(values, list) else args


@ui_router.get("/ui/submissions/{sub_id}")
def submission(request: Request, sub_id: str, token: User) -> Response:
    sub = _visible(request, token, sub_id)
    owner = store.get_token(_db(request), sub.owner_id) if token.role == "admin" else None
    return _render(
        request,
        "submission.html",
        {
            "sub": sub,
            "owner": owner,
            "command": shlex.join([sub.entry]) + (" " + _arguments(sub.args) if sub.args != "[]" else ""),
            "checks": _checks(sub.verdict_json),
            "sandbox": _sandbox(sub.sandbox),
            "active": sub.status in _ACTIVE,
            "refresh": _REFRESH_SECONDS if sub.status in _ACTIVE else None,
            "has_report": sub.profile is not None,
        },
    )


@ui_router.get("/ui/submissions/{sub_id}/report")
def submission_report(request: Request, sub_id: str, token: User) -> Response:
    from memgauge.service._api import report_html

    sub = _visible(request, token, sub_id)
    if sub.profile is None:
        raise HTTPException(
            404, f"submission {sub_id} has no report ({sub.status}): the run wrote no profile"
        )
    return HTMLResponse(
        report_html(sub),
        headers={"Content-Security-Policy": _REPORT_CSP, "X-Frame-Options": "SAMEORIGIN"},
    )


@ui_router.get("/ui/submissions/{sub_id}/profile.json")
def submission_profile(request: Request, sub_id: str, token: User) -> Response:
    sub = _visible(request, token, sub_id)
    if sub.profile is None:
        raise HTTPException(404, f"submission {sub_id} has no profile ({sub.status})")
    return Response(
        sub.profile,
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="memgauge-{sub.id}.json"'},
    )


@ui_router.post("/ui/submissions/{sub_id}/cancel")
def submission_cancel(request: Request, sub_id: str, token: User, csrf: Csrf = "") -> Response:
    _check_csrf(request, csrf)
    sub = _visible(request, token, sub_id)
    if sub.status in store.FINISHED:
        raise HTTPException(409, f"submission {sub_id} has finished ({sub.status}): nothing to cancel")
    store.request_cancel(_db(request), sub.id)
    request.app.state.dispatcher.wake()
    return RedirectResponse(f"/ui/submissions/{sub.id}", status_code=303)


# -- policies --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _PolicyRow:
    policy: Policy
    limits: list[str]


def _policy_row(p: Policy) -> _PolicyRow:
    from memgauge.gate import BudgetError, parse_budget

    try:
        limits = [
            f"{limit.key} ≤ {_amount(limit.value, limit.unit)}"
            for limit in parse_budget(p.budget, source=f"policy {p.name}")
        ]
    except BudgetError as e:  # a budget an older memgauge accepted
        limits = [f"unreadable: {str(e).splitlines()[0]}"]
    return _PolicyRow(p, limits)


def _policies_page(
    request: Request,
    *,
    form: Mapping[str, str] | None = None,
    error: str | None = None,
    notice: str | None = None,
    status: int = 200,
) -> HTMLResponse:
    rows = [_policy_row(p) for p in store.list_policies(_db(request))]
    return _render(
        request,
        "policies.html",
        {
            "rows": rows,
            "form": form or {"name": "", "budget": "", "description": ""},
            "error": error,
            "notice": notice,
        },
        status,
    )


@ui_router.get("/ui/policies")
def policies(request: Request, token: User, edit: str | None = None, saved: str | None = None) -> Response:
    form = None
    if edit and token.role == "admin":
        policy = store.get_policy(_db(request), edit) if _POLICY_NAME.fullmatch(edit) else None
        if policy is not None:
            form = {"name": policy.name, "budget": policy.budget, "description": policy.description}
    notice = None
    if saved and _POLICY_NAME.fullmatch(saved):
        notice = f"Policy {saved} saved."
    return _policies_page(request, form=form, notice=notice)


@ui_router.post("/ui/policies")
def policy_put(
    request: Request,
    _: Admin,
    csrf: Csrf = "",
    name: Annotated[str, Form(max_length=1000)] = "",
    budget: Annotated[str, Form(max_length=10_000)] = "",
    description: Annotated[str, Form(max_length=10_000)] = "",
) -> Response:
    """Create or replace a policy (the API's PUT)."""
    from memgauge.gate import BudgetError, parse_budget

    _check_csrf(request, csrf)
    name, budget = name.strip(), budget.strip()
    form = {"name": name, "budget": budget, "description": description}
    error = None
    if not _POLICY_NAME.fullmatch(name):
        error = "name: 1 to 100 letters, digits, '_', '.' or '-', starting with a letter or digit"
    elif not budget:
        error = "budget: give at least one limit, e.g. rss=512MiB wall=30s"
    elif len(budget) > 2000 or len(description) > 2000:
        error = "budget and description: at most 2000 characters each"
    else:
        try:
            parse_budget(budget, source="budget")
        except BudgetError as e:
            error = str(e)
    if error is not None:
        return _policies_page(request, form=form, error=error, status=422)
    store.put_policy(_db(request), name, budget, description)
    return RedirectResponse("/ui/policies?" + urlencode({"saved": name}), status_code=303)


@ui_router.post("/ui/policies/{name}/delete")
def policy_delete(request: Request, name: str, _: Admin, csrf: Csrf = "") -> Response:
    _check_csrf(request, csrf)
    if not _POLICY_NAME.fullmatch(name) or not store.delete_policy(_db(request), name):
        raise HTTPException(404, f"no policy {name!r}")
    return RedirectResponse("/ui/policies", status_code=303)


# -- tokens ----------------------------------------------------------------------------------------


def _tokens_page(
    request: Request,
    *,
    new: tuple[Token, str] | None = None,
    error: str | None = None,
    form: Mapping[str, str] | None = None,
    status: int = 200,
) -> HTMLResponse:
    from memgauge.service._auth import ROLES

    return _render(
        request,
        "tokens.html",
        {
            "tokens": store.list_tokens(_db(request)),
            "roles": ROLES,
            "new": new,
            "error": error,
            "form": form or {"name": "", "role": "submitter"},
        },
        status,
    )


@ui_router.get("/ui/tokens")
def tokens(request: Request, _: Admin) -> Response:
    return _tokens_page(request)


@ui_router.post("/ui/tokens")
def token_create(
    request: Request,
    _: Admin,
    csrf: Csrf = "",
    name: Annotated[str, Form(max_length=10_000)] = "",
    role: Annotated[str, Form(max_length=100)] = "submitter",
) -> Response:
    from memgauge.service._auth import ROLES

    _check_csrf(request, csrf)
    name = name.strip()
    form = {"name": name, "role": role}
    if not 1 <= len(name) <= 200:
        return _tokens_page(request, error="name: 1 to 200 characters", form=form, status=422)
    if role not in ROLES:
        return _tokens_page(request, error=f"role: one of {', '.join(ROLES)}", form=form, status=422)
    new = store.create_token(_db(request), name, role)
    # the secret is in this answer only (no-store: not kept by the browser's cache either)
    return _tokens_page(request, new=new)


@ui_router.post("/ui/tokens/{token_id}/revoke")
def token_revoke(request: Request, token_id: str, _: Admin, csrf: Csrf = "") -> Response:
    _check_csrf(request, csrf)
    db = _db(request)
    token = store.get_token(db, int(token_id)) if token_id.isdigit() and len(token_id) < 10 else None
    if token is None:
        raise HTTPException(404, f"no token {token_id}")
    if token.role == "admin" and token.revoked_at is None:
        admins = [t for t in store.list_tokens(db) if t.role == "admin" and t.revoked_at is None]
        if len(admins) <= 1:
            return _tokens_page(
                request, error="This is the last admin token: make another admin token first.", status=409
            )
    store.revoke_token(db, token.id)
    return RedirectResponse("/ui/tokens", status_code=303)
