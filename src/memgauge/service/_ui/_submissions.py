"""The submissions' pages: the list (filtered, paged), one submission's page with its report and
profile, and cancelling."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from fastapi import HTTPException, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse

from memgauge.service import _policies as policy_store
from memgauge.service import _store as store
from memgauge.service._judge import report_html
from memgauge.service._models import Submission, Token
from memgauge.service._rules import (
    MAX_ID,
    MAX_OFFSET,
    MAX_PAGE_SIZE,
    MAX_POLICY_NAME,
    PAGE_SIZE,
    is_admin,
    is_submission_id,
    listed_owner,
    may_see,
)
from memgauge.service._schemas import admission_out
from memgauge.service._ui._detail import checks, command, proof, sandbox
from memgauge.service._ui._render import REPORT_CSP, page_router, render
from memgauge.service._ui._session import Csrf, User, check_csrf, database

router = page_router()
_ACTIVE = (store.QUEUED, store.RUNNING)
_REFRESH_SECONDS = 3
_PAGE_SIZES = (20, 50, 100, 200, 500)


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
            "limit": self.limit if self.limit != PAGE_SIZE else None,
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


@router.get("/ui/submissions")
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
    admin = is_admin(token)
    if policy and len(policy) > MAX_POLICY_NAME:
        raise HTTPException(400, f"policy: at most {MAX_POLICY_NAME} characters")
    filters = _Filters(
        status=_choice("status", status, store.STATUSES),
        verdict=_choice("verdict", verdict, store.VERDICTS),
        policy=policy or None,
        owner=(_number("owner", owner, 0, 0, MAX_ID) or None) if admin else None,
        limit=_number("limit", limit, PAGE_SIZE, 1, MAX_PAGE_SIZE),
        offset=_number("offset", offset, 0, 0, MAX_OFFSET),
    )
    db = database(request)
    page = store.list_submissions(
        db,
        owner_id=listed_owner(token, filters.owner),
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
    return render(
        request,
        "submissions.html",
        {
            "items": page.items,
            "total": page.total,
            "filters": filters,
            "statuses": store.STATUSES,
            "verdicts": store.VERDICTS,
            "policies": [p.name for p in policy_store.list_policies(db)],
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
    sub = store.get_submission(database(request), sub_id) if is_submission_id(sub_id) else None
    if sub is None or not may_see(token, sub):
        raise HTTPException(404, f"no submission {sub_id}")
    return sub


@router.get("/ui/submissions/{sub_id}")
def submission(request: Request, sub_id: str, token: User) -> Response:
    sub = _visible(request, token, sub_id)
    owner = store.get_token(database(request), sub.owner_id) if is_admin(token) else None
    return render(
        request,
        "submission.html",
        {
            "sub": sub,
            "owner": owner,
            "command": command(sub),
            "checks": checks(sub),
            "sandbox": sandbox(sub.sandbox),
            "proof": proof(sub),
            "admission": admission_out(sub),
            "active": sub.status in _ACTIVE,
            "refresh": _REFRESH_SECONDS if sub.status in _ACTIVE else None,
            "has_report": sub.profile is not None,
        },
    )


@router.get("/ui/submissions/{sub_id}/report")
def submission_report(request: Request, sub_id: str, token: User) -> Response:
    sub = _visible(request, token, sub_id)
    if sub.profile is None:
        raise HTTPException(
            404, f"submission {sub_id} has no report ({sub.status}): the run wrote no profile"
        )
    return HTMLResponse(
        report_html(sub.profile),
        headers={"Content-Security-Policy": REPORT_CSP, "X-Frame-Options": "SAMEORIGIN"},
    )


@router.get("/ui/submissions/{sub_id}/profile.json")
def submission_profile(request: Request, sub_id: str, token: User) -> Response:
    sub = _visible(request, token, sub_id)
    if sub.profile is None:
        raise HTTPException(404, f"submission {sub_id} has no profile ({sub.status})")
    return Response(
        sub.profile,
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="memgauge-{sub.id}.json"'},
    )


@router.post("/ui/submissions/{sub_id}/cancel")
def submission_cancel(request: Request, sub_id: str, token: User, csrf: Csrf = "") -> Response:
    check_csrf(request, csrf)
    sub = _visible(request, token, sub_id)
    if sub.status in store.FINISHED:
        raise HTTPException(409, f"submission {sub_id} has finished ({sub.status}): nothing to cancel")
    store.request_cancel(database(request), sub.id)
    request.app.state.dispatcher.wake()
    return RedirectResponse(f"/ui/submissions/{sub.id}", status_code=303)
