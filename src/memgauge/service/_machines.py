"""Reads and writes of machines, the resource admitted submissions hold a share of, and of those
shares: what a machine holds, and releasing one."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select, update

from memgauge.service._db import Database
from memgauge.service._models import Machine, Policy, Submission, utcnow


@dataclass(frozen=True)
class Fill:
    """A machine and the submissions admitted to it (``held``, oldest first): their shares,
    each one's container need plus the kernel's share, against its memory."""

    machine: Machine
    held: list[Submission]

    @property
    def held_bytes(self) -> int:
        return sum(s.share_bytes or 0 for s in self.held)

    @property
    def free_bytes(self) -> int:
        return self.machine.memory_bytes - self.held_bytes


def list_machines(db: Database) -> list[Machine]:
    with db.session() as s:
        return list(s.scalars(select(Machine).order_by(Machine.name)))


def get_machine(db: Database, name: str) -> Machine | None:
    with db.session() as s:
        return s.get(Machine, name)


def put_machine(
    db: Database, name: str, memory_bytes: int, cores: int, description: str
) -> tuple[Machine, bool]:
    """The machine after the write, and whether it is new. What it holds stays admitted."""
    with db.session() as s, s.begin():
        machine = s.get(Machine, name)
        created = machine is None
        if machine is None:
            machine = Machine(name=name, memory_bytes=memory_bytes, cores=cores, description=description)
            s.add(machine)
        else:
            machine.memory_bytes, machine.cores = memory_bytes, cores
            machine.description, machine.updated_at = description, utcnow()
    return machine, created


def machine_in_use(db: Database, name: str) -> str | None:
    """Why ``name`` cannot be deleted: a policy names it, or it holds admitted submissions."""
    with db.session() as s:
        policies = list(s.scalars(select(Policy.name).where(Policy.machine == name).order_by(Policy.name)))
        held = s.scalar(select(func.count()).where(Submission.machine == name, Submission.held.is_(True)))
    if policies:
        return f"machine {name!r} is named by policies {', '.join(policies)}"
    if held:
        return f"machine {name!r} holds {held} admitted submissions: release them first"
    return None


def delete_machine(db: Database, name: str) -> bool:
    with db.session() as s, s.begin():
        machine = s.get(Machine, name)
        if machine is None:
            return False
        s.delete(machine)
    return True


def held_on(db: Database, name: str) -> list[Submission]:
    """The submissions admitted to ``name`` and not released, oldest first (without their uploads
    and profiles, which a fill does not need)."""
    from sqlalchemy.orm import defer

    with db.session() as s:
        return list(
            s.scalars(
                select(Submission)
                .options(defer(Submission.upload), defer(Submission.profile), defer(Submission.admission))
                .where(Submission.machine == name, Submission.held.is_(True))
                .order_by(Submission.finished_at, Submission.id)
            )
        )


def fills(db: Database) -> list[Fill]:
    return [Fill(m, held_on(db, m.name)) for m in list_machines(db)]


def release(db: Database, sub_id: str) -> bool:
    """Frees the share ``sub_id`` holds; False when it holds none (never admitted, or released)."""
    with db.session() as s, s.begin():
        done = s.execute(
            update(Submission)
            .where(Submission.id == sub_id, Submission.held.is_(True))
            .values(held=False, released_at=utcnow())
        )
        return bool(done.rowcount == 1)  # type: ignore[attr-defined]
