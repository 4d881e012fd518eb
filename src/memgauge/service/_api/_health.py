"""``/healthz``: whether the server answers, without a token."""

from __future__ import annotations

from fastapi import APIRouter, Request

from memgauge.service._api._common import TOO_LARGE, settings
from memgauge.service._schemas import Health

health_router = APIRouter(responses=TOO_LARGE)


@health_router.get("/healthz", response_model=Health, tags=["service"])
def health(request: Request) -> Health:
    """Whether the server answers (no token needed; says nothing about submissions)."""
    from memgauge import __version__

    configured = settings(request)
    return Health(
        status="ok",
        version=__version__,
        engine=configured.engine,
        workers=configured.workers,
        in_flight=request.app.state.dispatcher.in_flight,
    )
