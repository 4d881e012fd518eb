"""The server: the API, the web UI and the dispatcher around one database.

``create_app(settings)`` builds the ASGI app; starting it (uvicorn's lifespan) opens and migrates
the database, makes the first admin token when there is none, and starts the dispatcher; stopping
it puts running submissions back in the queue.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request, Response
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from memgauge.service import _store as store
from memgauge.service._guard import BodyGuard, too_large
from memgauge.service._settings import Settings

ADMIN_TOKEN_FILE = "admin-token"


def prepare_data_dir(settings: Settings) -> None:
    """The data directory, made (mode 0700) if needed; OutputError (exit 73) naming it when it
    cannot be."""
    from memgauge._errors import OutputError

    # the database and the first admin token live here: no one but the server's user may read it
    try:
        os.makedirs(settings.data_dir, mode=0o700, exist_ok=True)
        os.chmod(settings.data_dir, 0o700)
    except OSError as e:
        raise OutputError(f"--data-dir {settings.data_dir}: cannot use it: {e.strerror or e}") from None


def bootstrap_admin(settings: Settings, db: object) -> str | None:
    """The first admin token, when the database has none: ``settings.admin_token`` if given, else
    a new one written to ``DATA_DIR/admin-token`` (mode 0600). Returns where it was put."""
    from memgauge.service._db import Database

    assert isinstance(db, Database)
    if settings.admin_token is not None:
        if store.find_token(db, settings.admin_token) is None:
            store.create_token(db, "admin (--admin-token)", "admin", settings.admin_token)
        return None
    if store.has_admin(db):
        return None
    _, secret = store.create_token(db, "admin (first start)", "admin")
    path = os.path.join(settings.data_dir, ADMIN_TOKEN_FILE)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secret + "\n")
    return path


def validation_error(exc: RequestValidationError) -> JSONResponse:
    """FastAPI's refusal of a request's parameters, as the API documents every 422 (``ErrorOut``'s
    ``detail`` in words, the fields in ``errors``), without echoing the values sent."""
    from memgauge.service._schemas import FieldError, ValidationErrorOut

    errors = [
        FieldError(
            loc=[part if isinstance(part, int) else str(part) for part in e.get("loc", ())],
            msg=str(e.get("msg", "")),
            type=str(e.get("type", "")),
        )
        for e in exc.errors()
    ]
    detail = "; ".join(f"{'.'.join(map(str, e.loc))}: {e.msg}" for e in errors) or "the request is not valid"
    body = ValidationErrorOut(detail=detail, errors=errors)
    return JSONResponse(body.model_dump(mode="json"), status_code=422)


def create_app(settings: Settings) -> FastAPI:
    from memgauge import __version__
    from memgauge.service._api import health_router, router
    from memgauge.service._ui import ui_router

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        from memgauge.service._db import database_url, open_database
        from memgauge.service._dispatch import Dispatcher
        from memgauge.sweep import make_engine

        prepare_data_dir(settings)
        db = open_database(database_url(settings.db_url, settings.data_dir))
        where = bootstrap_admin(settings, db)
        if where is not None:
            print(f"memgauge serve: the first admin token is in {where}", file=sys.stderr, flush=True)
        engine = make_engine(
            settings.engine,
            concurrency=settings.workers if settings.engine == "local" else None,
            address=settings.address,
        )
        dispatcher = Dispatcher(db, settings, engine)
        app.state.db, app.state.settings, app.state.dispatcher = db, settings, dispatcher
        dispatcher.start()
        try:
            yield
        finally:
            dispatcher.stop()
            db.close()

    app = FastAPI(
        title="memgauge validation service",
        version=__version__,
        description=(
            "Submit Python programs; each runs sandboxed under memgauge and is judged against a "
            "memory and time policy. Authenticate with `Authorization: Bearer mg_...`."
        ),
        lifespan=lifespan,
    )

    # the token before the body, and every body limited as it streams (_guard.py)
    app.add_middleware(BodyGuard, upload_bytes=settings.max_upload_bytes)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 413:
            return too_large(request, exc)
        return await http_exception_handler(request, exc)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return validation_error(exc)

    app.include_router(health_router)
    app.include_router(router)
    app.include_router(ui_router)
    return app
