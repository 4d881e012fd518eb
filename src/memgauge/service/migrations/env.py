"""Alembic's environment: the service runs migrations itself at start (``memgauge serve``) with
the connection it was given, so this file takes the URL from the Alembic config it is handed."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from memgauge.service._models import Base

config = context.config
connection = config.attributes.get("connection")
if connection is not None:
    context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    engine = create_engine(config.get_main_option("sqlalchemy.url") or "")
    with engine.connect() as conn:
        context.configure(connection=conn, target_metadata=Base.metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()
