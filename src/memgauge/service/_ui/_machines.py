"""The machines' page: each machine's fill (the shares admitted to it against its memory), releasing
a share (its owner or an admin), and, for admins, making, replacing and deleting machines."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import urlencode

from fastapi import Form, HTTPException, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse

from memgauge.service import _machines as machines
from memgauge.service import _store as store
from memgauge.service._machines import Fill
from memgauge.service._models import Submission, Token
from memgauge.service._rules import (
    is_policy_name,
    is_submission_id,
    machine_error,
    machine_memory,
    may_see,
)
from memgauge.service._ui._render import page_router, render
from memgauge.service._ui._session import Admin, Csrf, User, check_csrf, database

router = page_router()
_FORM_TEXT = 10_000
# the fill's bar: shares laid side by side on this many units, the machine's memory a mark on it
_BAR = 1000


@dataclass(frozen=True)
class _Segment:
    sub: Submission
    visible: bool
    x: int
    width: int


@dataclass(frozen=True)
class _Row:
    fill: Fill
    segments: list[_Segment]
    limit_x: int

    @property
    def percent(self) -> float:
        return 100.0 * self.fill.held_bytes / max(1, self.fill.machine.memory_bytes)


def _row(fill: Fill, viewer: Token) -> _Row:
    # a machine held over its memory (made smaller after admitting) still shows every share
    scale = max(fill.machine.memory_bytes, fill.held_bytes, 1)
    segments, at = [], 0
    for sub in fill.held:
        width = round(_BAR * (sub.share_bytes or 0) / scale)
        segments.append(_Segment(sub, may_see(viewer, sub), at, width))
        at += width
    return _Row(fill, segments, round(_BAR * fill.machine.memory_bytes / scale))


def _page(
    request: Request,
    token: Token,
    *,
    form: Mapping[str, str] | None = None,
    error: str | None = None,
    notice: str | None = None,
    status: int = 200,
) -> HTMLResponse:
    rows = [_row(f, token) for f in machines.fills(database(request))]
    return render(
        request,
        "machines.html",
        {
            "rows": rows,
            "bar": _BAR,
            "form": form or {"name": "", "memory": "", "cores": "", "description": ""},
            "error": error,
            "notice": notice,
        },
        status,
    )


@router.get("/ui/machines")
def machines_page(request: Request, token: User, saved: str | None = None) -> Response:
    notice = f"Machine {saved} saved." if saved and is_policy_name(saved) else None
    return _page(request, token, notice=notice)


@router.post("/ui/machines")
def machine_put(
    request: Request,
    token: Admin,
    csrf: Csrf = "",
    name: Annotated[str, Form(max_length=1000)] = "",
    memory: Annotated[str, Form(max_length=1000)] = "",
    cores: Annotated[str, Form(max_length=100)] = "",
    description: Annotated[str, Form(max_length=_FORM_TEXT)] = "",
) -> Response:
    """Create or replace a machine (the API's PUT)."""
    check_csrf(request, csrf)
    name, memory = name.strip(), memory.strip()
    count = int(cores) if cores.strip().isdigit() else 0
    error = machine_error(name, memory, count, description)
    if error is not None:
        form = {"name": name, "memory": memory, "cores": cores, "description": description}
        return _page(request, token, form=form, error=error, status=422)
    machines.put_machine(database(request), name, machine_memory(memory), count, description)
    return RedirectResponse("/ui/machines?" + urlencode({"saved": name}), status_code=303)


@router.post("/ui/machines/{name}/delete")
def machine_delete(request: Request, name: str, token: Admin, csrf: Csrf = "") -> Response:
    check_csrf(request, csrf)
    db = database(request)
    if not is_policy_name(name) or machines.get_machine(db, name) is None:
        raise HTTPException(404, f"no machine {name!r}")
    busy = machines.machine_in_use(db, name)
    if busy is not None:
        return _page(request, token, error=busy + ".", status=409)
    machines.delete_machine(db, name)
    return RedirectResponse("/ui/machines", status_code=303)


@router.post("/ui/submissions/{sub_id}/release")
def submission_release(request: Request, sub_id: str, token: User, csrf: Csrf = "") -> Response:
    """Free the submission's share of its machine; back to the page it was released from."""
    check_csrf(request, csrf)
    db = database(request)
    sub = store.get_submission(db, sub_id) if is_submission_id(sub_id) else None
    if sub is None or not may_see(token, sub):
        raise HTTPException(404, f"no submission {sub_id}")
    if not machines.release(db, sub.id):
        raise HTTPException(409, f"submission {sub_id} holds no share of a machine")
    return RedirectResponse("/ui/machines", status_code=303)
