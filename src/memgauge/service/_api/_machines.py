"""``/machines``: the machines passes are admitted to, and what each holds (any token reads, admins
write)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Request, Response
from fastapi import Path as Path_

from memgauge.service import _machines as machines
from memgauge.service._api._common import INVALID, UNREADABLE, Admin, User, database
from memgauge.service._rules import MACHINE_NAME, machine_error, machine_memory
from memgauge.service._schemas import ErrorOut, MachineIn, MachineOut, machine_out

router = APIRouter()
MachineName = Annotated[str, Path_(pattern=MACHINE_NAME)]


@router.get("/machines", response_model=list[MachineOut], tags=["machines"])
def list_machines(request: Request, token: User) -> list[MachineOut]:
    """Every machine with its fill (another owner's shares without their submission's id)."""
    return [machine_out(f.machine, f.held, token) for f in machines.fills(database(request))]


@router.get(
    "/machines/{name}",
    response_model=MachineOut,
    tags=["machines"],
    responses={404: {"model": ErrorOut}, **INVALID},
)
def get_machine(request: Request, name: MachineName, token: User) -> MachineOut:
    db = database(request)
    machine = machines.get_machine(db, name)
    if machine is None:
        raise HTTPException(404, f"no machine {name!r}")
    return machine_out(machine, machines.held_on(db, name), token)


@router.put(
    "/machines/{name}",
    response_model=MachineOut,
    tags=["machines"],
    responses={201: {"model": MachineOut, "description": "created"}, **INVALID, **UNREADABLE},
)
def put_machine(
    request: Request, response: Response, name: MachineName, body: MachineIn, token: Admin
) -> MachineOut:
    """Create or replace a machine. What it holds stays admitted (a smaller machine can be over)."""
    error = machine_error(name, body.memory, body.cores, body.description)
    if error is not None:
        raise HTTPException(422, error)
    db = database(request)
    machine, created = machines.put_machine(
        db, name, machine_memory(body.memory), body.cores, body.description
    )
    if created:
        response.status_code = 201
    return machine_out(machine, machines.held_on(db, name), token)


@router.delete(
    "/machines/{name}",
    status_code=204,
    tags=["machines"],
    responses={
        404: {"model": ErrorOut},
        409: {"model": ErrorOut, "description": "a policy names it, or it holds admitted submissions"},
        **INVALID,
    },
)
def delete_machine(request: Request, name: MachineName, _: Admin) -> Response:
    db = database(request)
    if machines.get_machine(db, name) is None:
        raise HTTPException(404, f"no machine {name!r}")
    busy = machines.machine_in_use(db, name)
    if busy is not None:
        raise HTTPException(409, busy)
    if not machines.delete_machine(db, name):
        raise HTTPException(404, f"no machine {name!r}")
    return Response(status_code=204)
