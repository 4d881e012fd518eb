"""The web UI: server-rendered pages (Jinja2, autoescaped) over the same store as the API, with the
same rules (``_rules``).

Layout: ``_session`` (the session cookie, the admin check, CSRF), ``_render`` (templates, error
pages, security headers, the static files), ``_login`` (signing in and out), ``_submissions`` (the
list, a submission's page, its report, cancelling) with ``_detail`` (what that page shows of the
stored record), ``_admin`` (policies and tokens), ``_machines`` (each machine's fill, releasing a
share). The routes are matched in that order.
"""

from __future__ import annotations

from fastapi import APIRouter

from memgauge.service._ui import _admin, _login, _machines, _render, _submissions

__all__ = ["ui_router"]

ui_router = APIRouter(include_in_schema=False)
for _part in (_render, _login, _submissions, _admin, _machines):
    ui_router.include_router(_part.router)
