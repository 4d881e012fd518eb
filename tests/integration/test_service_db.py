"""The service's database layer against real SQLite files and a real PostgreSQL server: the
migrations make exactly the schema the models describe, go down and up again, and claiming queued
submissions never hands one to two workers."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy")

from memgauge._errors import UsageError
from memgauge.service import _store as store
from memgauge.service._db import Database, database_url, migrate, open_database
from tests.service_server import postgres_database


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    if request.param == "sqlite":
        database = open_database(database_url(None, str(tmp_path)))
        yield database
        database.close()
        return
    with postgres_database() as url:
        database = open_database(database_url(url, str(tmp_path)))
        yield database
        database.close()


def test_the_migrations_make_the_schema_the_models_describe(db: Database) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from memgauge.service._models import Base

    with db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []


def test_the_migrations_go_down_and_up_again(db: Database) -> None:
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import inspect

    from memgauge.service._db import MIGRATIONS

    config = Config()
    config.set_main_option("script_location", MIGRATIONS)
    with db.engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, "base")
    assert set(inspect(db.engine).get_table_names()) <= {"alembic_version"}
    migrate(db.engine)
    assert {"tokens", "policies", "submissions"} <= set(inspect(db.engine).get_table_names())
    migrate(db.engine)  # at the newest revision already: nothing to do, no error


def test_a_database_that_cannot_be_opened_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot open the database"):
        open_database("postgresql+psycopg://postgres@127.0.0.1:1/nothing")
    with pytest.raises(UsageError, match="--db"):
        open_database("nosuchdialect://x")


def _new(owner: int, n: int) -> store.NewSubmission:
    return store.NewSubmission(owner, "p", "rss=1GiB", f"job{n}.py", "py", f"job{n}.py", [], b"print(1)\n")


def test_concurrent_claims_never_hand_a_submission_to_two_workers(db: Database) -> None:
    token, _ = store.create_token(db, "t", "submitter")
    ids = {store.add_submission(db, _new(token.id, n)).id for n in range(40)}
    claimed: dict[str, list[str]] = {f"w{i}": [] for i in range(4)}

    def work(worker: str) -> None:
        while batch := store.claim_queued(db, worker, 3):
            claimed[worker].extend(s.id for s in batch)

    threads = [threading.Thread(target=work, args=(w,)) for w in claimed]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [sub_id for got in claimed.values() for sub_id in got]
    assert sorted(every) == sorted(ids)  # each exactly once
    subs = [store.get_submission(db, i) for i in ids]
    assert all(s is not None and s.attempts == 1 and s.status == store.RUNNING for s in subs)


def test_an_interrupted_run_is_requeued_until_its_attempts_are_spent(db: Database) -> None:
    token, _ = store.create_token(db, "t", "submitter")
    sub_id = store.add_submission(db, _new(token.id, 0)).id
    (sub,) = store.claim_queued(db, "a", 1)
    assert store.requeue_or_fail(db, sub, "the server stopped", 2, charge=False) == store.QUEUED
    (sub,) = store.claim_queued(db, "b", 1)
    assert sub.attempts == 1  # the uncharged stop gave its attempt back
    assert store.requeue_or_fail(db, sub, "the worker was lost", 2) == store.QUEUED
    (sub,) = store.claim_queued(db, "c", 1)
    assert sub.attempts == 2
    assert store.requeue_or_fail(db, sub, "the worker was lost", 2) == store.FAILED
    final = store.get_submission(db, sub_id)
    assert final is not None and final.status == store.FAILED and final.verdict == "error"
    assert final.reason is not None and "gave up after 2 attempts" in final.reason
    # a result stored under a claim that is no longer held is dropped
    assert not store.finish(db, sub_id, "c", status=store.DONE)


def test_tokens_are_stored_hashed(db: Database) -> None:
    from sqlalchemy import text

    _, secret = store.create_token(db, "someone", "submitter")
    with db.engine.connect() as conn:
        rows = conn.execute(text("SELECT * FROM tokens")).all()
    assert secret not in repr(rows)
    found = store.find_token(db, secret)
    assert found is not None and found.name == "someone"
    assert store.find_token(db, secret + "x") is None
    store.revoke_token(db, found.id)
    assert store.find_token(db, secret) is None
