"""Reads and writes of policies, the named budgets submissions are judged by (and the machine
their passes are admitted to), one short transaction each."""

from __future__ import annotations

from sqlalchemy import select

from memgauge.service._db import Database
from memgauge.service._models import Policy, utcnow


def list_policies(db: Database) -> list[Policy]:
    with db.session() as s:
        return list(s.scalars(select(Policy).order_by(Policy.name)))


def get_policy(db: Database, name: str) -> Policy | None:
    with db.session() as s:
        return s.get(Policy, name)


def put_policy(
    db: Database,
    name: str,
    budget: str,
    description: str,
    prove: bool = False,
    allow_unmeasured: bool = False,
    machine: str | None = None,
    rule: str = "worst",
) -> tuple[Policy, bool]:
    """The policy after the write, and whether it is new."""
    with db.session() as s, s.begin():
        policy = s.get(Policy, name)
        created = policy is None
        if policy is None:
            policy = Policy(
                name=name,
                budget=budget,
                description=description,
                prove=prove,
                allow_unmeasured=allow_unmeasured,
            )
            s.add(policy)
        else:
            policy.budget, policy.description, policy.updated_at = budget, description, utcnow()
            policy.prove, policy.allow_unmeasured = prove, allow_unmeasured
        policy.machine, policy.rule = machine, rule
    return policy, created


def delete_policy(db: Database, name: str) -> bool:
    with db.session() as s, s.begin():
        policy = s.get(Policy, name)
        if policy is None:
            return False
        s.delete(policy)
    return True
