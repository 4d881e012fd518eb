"""The database: an embedded SQLite file by default, PostgreSQL when shared by several servers.

The schema is Alembic's (``migrations/``): ``open_database`` brings any database up to the newest
revision before the server takes requests, so upgrading memgauge upgrades the schema with it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from memgauge._errors import UsageError

MIGRATIONS = str(Path(__file__).with_name("migrations"))


class Database:
    """An engine and its session factory; ``url`` is shown with any password hidden."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.url = engine.url.render_as_string(hide_password=True)
        self.sessions = sessionmaker(engine, expire_on_commit=False)
        self.is_sqlite = engine.dialect.name == "sqlite"

    def session(self) -> Session:
        return self.sessions()

    def close(self) -> None:
        self.engine.dispose()


def database_url(url: str | None, data_dir: str) -> str:
    """``url`` as SQLAlchemy takes it: None is the SQLite file in the data directory, and
    ``postgresql://`` means the psycopg 3 driver (SQLAlchemy would otherwise look for psycopg2)."""
    if url is None:
        return "sqlite:///" + os.path.join(os.path.abspath(data_dir), "memgauge.db")
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def open_database(url: str) -> Database:
    """Connects, migrates to the newest schema and returns the database; UsageError when the URL
    is malformed or the server cannot be reached."""
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError

    try:
        if url.startswith("sqlite"):
            # one server process, many threads; a busy timeout instead of instant "database is locked"
            engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
            event.listen(engine, "connect", _sqlite_pragmas)
        else:
            engine = create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)
        migrate(engine)
    except (ArgumentError, NoSuchModuleError) as e:
        raise UsageError(f"--db: cannot use {url!r}: {e}") from None
    except OperationalError as e:
        raise UsageError(f"--db: cannot open the database: {str(e.orig).strip() or e}") from None
    return Database(engine)


def migrate(engine: Engine) -> None:
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", MIGRATIONS)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL: readers (the API) never wait for the writer (the dispatcher storing a result)
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()
