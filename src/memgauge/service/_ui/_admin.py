"""The policies' page (everyone reads, admins write) and the tokens' page (admins)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import urlencode

from fastapi import Form, HTTPException, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse

from memgauge.service import _machines as machines
from memgauge.service import _policies as policy_store
from memgauge.service import _store as store
from memgauge.service._models import Policy, Token
from memgauge.service._rules import (
    ADMIT_RULES,
    ROLES,
    admission_error,
    is_admin,
    is_last_admin,
    is_policy_name,
    parse_id,
    policy_error,
    role_error,
    token_name_error,
)
from memgauge.service._ui._render import page_router, render
from memgauge.service._ui._session import Admin, Csrf, User, check_csrf, database

router = page_router()
# what a form may send at all: more than the rules allow, so that a long value is told why
_FORM_TEXT = 10_000

# -- policies --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _PolicyRow:
    policy: Policy
    limits: list[str]


def _policy_row(p: Policy) -> _PolicyRow:
    from memgauge.gate import BudgetError, format_amount, parse_budget

    try:
        limits = [
            f"{limit.key} {'≥' if limit.lower else '≤'} {format_amount(limit.value, limit.unit)}"
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
    db = database(request)
    rows = [_policy_row(p) for p in policy_store.list_policies(db)]
    return render(
        request,
        "policies.html",
        {
            "rows": rows,
            "machines": [m.name for m in machines.list_machines(db)],
            "rules": ADMIT_RULES,
            "form": form
            or {
                "name": "",
                "budget": "",
                "description": "",
                "prove": "",
                "allow_unmeasured": "",
                "machine": "",
                "rule": "worst",
            },
            "error": error,
            "notice": notice,
        },
        status,
    )


@router.get("/ui/policies")
def policies(request: Request, token: User, edit: str | None = None, saved: str | None = None) -> Response:
    form = None
    if edit and is_admin(token):
        policy = policy_store.get_policy(database(request), edit) if is_policy_name(edit) else None
        if policy is not None:
            form = {
                "name": policy.name,
                "budget": policy.budget,
                "description": policy.description,
                "prove": "on" if policy.prove else "",
                "allow_unmeasured": "on" if policy.allow_unmeasured else "",
                "machine": policy.machine or "",
                "rule": policy.rule,
            }
    notice = None
    if saved and is_policy_name(saved):
        notice = f"Policy {saved} saved."
    return _policies_page(request, form=form, notice=notice)


@router.post("/ui/policies")
def policy_put(
    request: Request,
    _: Admin,
    csrf: Csrf = "",
    name: Annotated[str, Form(max_length=1000)] = "",
    budget: Annotated[str, Form(max_length=_FORM_TEXT)] = "",
    description: Annotated[str, Form(max_length=_FORM_TEXT)] = "",
    prove: Annotated[str, Form(max_length=10)] = "",
    allow_unmeasured: Annotated[str, Form(max_length=10)] = "",
    machine: Annotated[str, Form(max_length=1000)] = "",
    rule: Annotated[str, Form(max_length=100)] = "worst",
) -> Response:
    """Create or replace a policy (the API's PUT)."""
    check_csrf(request, csrf)
    db = database(request)
    name, budget, proves, allows = name.strip(), budget.strip(), bool(prove), bool(allow_unmeasured)
    error = policy_error(name, budget, description, proves) or admission_error(
        machine or None, rule, (m.name for m in machines.list_machines(db))
    )
    if error is not None:
        form = {
            "name": name,
            "budget": budget,
            "description": description,
            "prove": "on" if proves else "",
            "allow_unmeasured": "on" if allows else "",
            "machine": machine,
            "rule": rule,
        }
        return _policies_page(request, form=form, error=error, status=422)
    policy_store.put_policy(
        db, name, budget, description, proves, allow_unmeasured=allows, machine=machine or None, rule=rule
    )
    return RedirectResponse("/ui/policies?" + urlencode({"saved": name}), status_code=303)


@router.post("/ui/policies/{name}/delete")
def policy_delete(request: Request, name: str, _: Admin, csrf: Csrf = "") -> Response:
    check_csrf(request, csrf)
    if not is_policy_name(name) or not policy_store.delete_policy(database(request), name):
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
    return render(
        request,
        "tokens.html",
        {
            "tokens": store.list_tokens(database(request)),
            "roles": ROLES,
            "new": new,
            "error": error,
            "form": form or {"name": "", "role": "submitter"},
        },
        status,
    )


@router.get("/ui/tokens")
def tokens(request: Request, _: Admin) -> Response:
    return _tokens_page(request)


@router.post("/ui/tokens")
def token_create(
    request: Request,
    _: Admin,
    csrf: Csrf = "",
    name: Annotated[str, Form(max_length=_FORM_TEXT)] = "",
    role: Annotated[str, Form(max_length=100)] = "submitter",
) -> Response:
    check_csrf(request, csrf)
    name = name.strip()
    error = token_name_error(name) or role_error(role)
    if error is not None:
        return _tokens_page(request, error=error, form={"name": name, "role": role}, status=422)
    new = store.create_token(database(request), name, role)
    # the secret is in this answer only (no-store: not kept by the browser's cache either)
    return _tokens_page(request, new=new)


@router.post("/ui/tokens/{token_id}/revoke")
def token_revoke(request: Request, token_id: str, _: Admin, csrf: Csrf = "") -> Response:
    check_csrf(request, csrf)
    db = database(request)
    number = parse_id(token_id)
    token = store.get_token(db, number) if number is not None else None
    if token is None:
        raise HTTPException(404, f"no token {token_id}")
    if is_last_admin(token, store.list_tokens(db)):
        return _tokens_page(
            request, error="This is the last admin token: make another admin token first.", status=409
        )
    store.revoke_token(db, token.id)
    return RedirectResponse("/ui/tokens", status_code=303)
