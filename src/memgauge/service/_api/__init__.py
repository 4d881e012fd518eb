"""The HTTP API (``/api/v1``), documented by its OpenAPI schema at ``/openapi.json``.

Every route but ``/healthz`` needs a token (``Authorization: Bearer mg_...``). Submitters see and
cancel their own submissions; admins see every submission and manage policies and tokens.

Layout: ``_common`` (the token checks and the documented error answers), ``_health``, ``_tokens``
(``/me`` and ``/tokens``), ``_machines``, ``_policies``, ``_submissions``. The routes are listed, and so
documented, in that order.
"""

from __future__ import annotations

from fastapi import APIRouter

from memgauge.service._api import _machines, _policies, _submissions, _tokens
from memgauge.service._api._common import ERRORS
from memgauge.service._api._health import health_router

__all__ = ["health_router", "router"]

router = APIRouter(prefix="/api/v1", responses=ERRORS)
for _part in (_tokens, _machines, _policies, _submissions):
    router.include_router(_part.router)
