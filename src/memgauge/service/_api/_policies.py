"""``/policies``: the named budgets submissions are judged by (any token reads, admins write)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Request, Response
from fastapi import Path as Path_

from memgauge.service import _machines as machines
from memgauge.service import _policies as policy_store
from memgauge.service._api._common import INVALID, UNREADABLE, Admin, User, database
from memgauge.service._rules import POLICY_NAME, admission_error, budget_error, prove_error
from memgauge.service._schemas import ErrorOut, PolicyIn, PolicyOut, policy_out

router = APIRouter()
PolicyName = Annotated[str, Path_(pattern=POLICY_NAME)]


@router.get("/policies", response_model=list[PolicyOut], tags=["policies"])
def list_policies(request: Request, _: User) -> list[PolicyOut]:
    """Every policy (any token may read them: submitters choose one)."""
    return [policy_out(p) for p in policy_store.list_policies(database(request))]


@router.get(
    "/policies/{name}",
    response_model=PolicyOut,
    tags=["policies"],
    responses={404: {"model": ErrorOut}, **INVALID},
)
def get_policy(request: Request, name: PolicyName, _: User) -> PolicyOut:
    policy = policy_store.get_policy(database(request), name)
    if policy is None:
        raise HTTPException(404, f"no policy {name!r}")
    return policy_out(policy)


@router.put(
    "/policies/{name}",
    response_model=PolicyOut,
    tags=["policies"],
    responses={201: {"model": PolicyOut, "description": "created"}, **INVALID, **UNREADABLE},
)
def put_policy(request: Request, response: Response, name: PolicyName, body: PolicyIn, _: Admin) -> PolicyOut:
    """Create or replace a policy. Submissions keep the budget, machine and rule they were
    submitted under."""
    db = database(request)
    error = (
        budget_error(body.budget)
        or prove_error(body.budget, body.prove)
        or admission_error(body.machine, body.rule, (m.name for m in machines.list_machines(db)))
    )
    if error is not None:
        raise HTTPException(422, error)
    policy, created = policy_store.put_policy(
        db,
        name,
        body.budget,
        body.description,
        body.prove,
        allow_unmeasured=body.allow_unmeasured,
        machine=body.machine,
        rule=body.rule,
    )
    if created:
        response.status_code = 201
    return policy_out(policy)


@router.delete(
    "/policies/{name}", status_code=204, tags=["policies"], responses={404: {"model": ErrorOut}, **INVALID}
)
def delete_policy(request: Request, name: PolicyName, _: Admin) -> Response:
    if not policy_store.delete_policy(database(request), name):
        raise HTTPException(404, f"no policy {name!r}")
    return Response(status_code=204)
