"""The service's database layer against real SQLite files and a real PostgreSQL server: the
migrations make exactly the schema the models describe, go down and up again, and claiming queued
submissions never hands one to two workers."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy")

from memgauge._errors import UsageError
from memgauge.service import _store as store
from memgauge.service._db import Database, database_url, migrate, open_database
from tests.conftest import MIB
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


def test_stored_verdicts_from_before_the_envelope_get_its_header_and_read_the_same(db: Database) -> None:
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import text

    from memgauge.gate import Verdict
    from memgauge.service._db import MIGRATIONS

    token, _ = store.create_token(db, "t", "submitter")
    subs = [store.add_submission(db, _new(token.id, n)).id for n in range(3)]
    verdict = json.loads((Path(__file__).parents[1] / "data" / "records" / "verdict-v1.json").read_text())
    assert "format" not in verdict  # as memgauge stored them before the envelope
    stored = {subs[0]: json.dumps(verdict), subs[1]: "not json", subs[2]: None}
    config = Config()
    config.set_main_option("script_location", MIGRATIONS)
    with db.engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, "0004_machines")
        for sub_id, value in stored.items():
            conn.execute(
                text("UPDATE submissions SET verdict_json = :v WHERE id = :i"), {"v": value, "i": sub_id}
            )
    migrate(db.engine)
    after = {sub_id: getattr(store.get_submission(db, sub_id), "verdict_json", "") for sub_id in subs}
    assert after[subs[1]] == "not json" and after[subs[2]] is None  # no verdict to rewrite: left alone
    new = json.loads(after[subs[0]] or "")
    assert list(new)[:2] == ["format", "version"] and (new["format"], new["version"]) == (
        "memgauge-verdict",
        2,
    )
    assert Verdict.from_dict(new) == Verdict.from_dict(verdict)
    with db.engine.begin() as conn:  # and down again: the header goes
        config.attributes["connection"] = conn
        command.downgrade(config, "0004_machines")
        back = conn.execute(
            text("SELECT verdict_json FROM submissions WHERE id = :i"), {"i": subs[0]}
        ).scalar()
    assert json.loads(back) == verdict
    migrate(db.engine)


def test_stored_submissions_get_the_runs_one_memory_figure(db: Database) -> None:
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import text

    from memgauge.service._db import MIGRATIONS

    token, _ = store.create_token(db, "t", "submitter")
    old, before_needs, unreadable = (store.add_submission(db, _new(token.id, n)).id for n in range(3))
    peak = {"resident_bytes": 150 * MIB, "needs_bytes": 200 * MIB}
    rows = {
        old: (json.dumps({"peak": peak}), 150 * MIB),  # judged before: the resident peak stored
        before_needs: (json.dumps({"peak": {**peak, "needs_bytes": 0}}), 150 * MIB),  # a v5 profile
        unreadable: ("{", 7),
    }
    config = Config()
    config.set_main_option("script_location", MIGRATIONS)
    with db.engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, "0005_verdict_envelope")
        for sub_id, (profile, figure) in rows.items():
            conn.execute(
                text("UPDATE submissions SET profile = :p, peak_rss_bytes = :f WHERE id = :i"),
                {"p": profile, "f": figure, "i": sub_id},
            )
    migrate(db.engine)
    stored = {i: getattr(store.get_submission(db, i), "peak_rss_bytes", None) for i in rows}
    assert stored == {old: 200 * MIB, before_needs: 150 * MIB, unreadable: 7}
    with db.engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, "0005_verdict_envelope")
        back = conn.execute(text("SELECT peak_rss_bytes FROM submissions WHERE id = :i"), {"i": old}).scalar()
    assert back == 150 * MIB
    migrate(db.engine)


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


# -- the rules the API and the UI share (service/_rules.py) ----------------------------------------


def test_who_may_see_and_revoke(db: Database) -> None:
    from memgauge.service._rules import is_last_admin, listed_owner, may_see

    root, _ = store.create_token(db, "root", "admin")
    alice, _ = store.create_token(db, "alice", "submitter")
    bob, _ = store.create_token(db, "bob", "submitter")
    assert is_last_admin(root, store.list_tokens(db))
    assert not is_last_admin(alice, store.list_tokens(db))
    second, _ = store.create_token(db, "second", "admin")
    assert not is_last_admin(root, store.list_tokens(db))
    store.revoke_token(db, second.id)
    assert is_last_admin(root, store.list_tokens(db))
    revoked = store.get_token(db, second.id)
    assert revoked is not None and not is_last_admin(revoked, store.list_tokens(db))

    sub = store.add_submission(db, _new(alice.id, 0))
    assert may_see(alice, sub) and may_see(root, sub) and not may_see(bob, sub)
    # a submitter lists its own whatever it asks; an admin whose it asks (None: everyone's)
    assert (listed_owner(alice, bob.id), listed_owner(root, bob.id), listed_owner(root, None)) == (
        alice.id,
        bob.id,
        None,
    )


def test_what_a_value_may_be() -> None:
    from memgauge.service._rules import (
        EMPTY_BUDGET,
        POLICY_NAME_RULE,
        arguments,
        budget_error,
        entry_error,
        filename_error,
        is_policy_name,
        is_submission_id,
        parse_id,
        policy_error,
        role_error,
        token_name_error,
    )

    assert all(is_policy_name(n) for n in ("a", "edge-pc", "v1.2_b", "x" * 100))
    assert not any(is_policy_name(n) for n in ("", "-a", ".a", "a b", "x" * 101, "a\n"))
    assert is_submission_id("0123456789abcdef" * 2)
    assert not any(is_submission_id(s) for s in ("0" * 31, "0" * 33, "G" * 32, "0" * 32 + "\n"))
    assert [parse_id(t) for t in ("7", str(2**31 - 1), "0", str(2**31), "1e3", "", "-1", "9" * 40)] == [
        7,
        2**31 - 1,
        None,
        None,
        None,
        None,
        None,
        None,
    ]
    assert token_name_error("a" * 200) is None and token_name_error("a\0b") == "name: no NUL characters"
    assert token_name_error("") == token_name_error("a" * 201) == "name: 1 to 200 characters"
    assert (role_error("admin"), role_error("boss")) == (None, "role: one of submitter, admin")
    # the UI's form is refused as the API's PUT is: no limit at all is no policy
    assert policy_error("ok", "rss=1MiB", "") is None
    assert policy_error("-ok", "rss=1MiB", "") == POLICY_NAME_RULE
    assert policy_error("ok", "", "") == policy_error("ok", " , ", "") == budget_error(" , ") == EMPTY_BUDGET
    assert (
        policy_error("ok", "rss=1MiB", "d" * 2001) == "budget and description: at most 2000 characters each"
    )
    assert policy_error("ok", "rss=1MiB", "\0") == "budget and description: no NUL characters"
    error = policy_error("ok", "rss=1MiB mem=3", "")
    assert error is not None and error.startswith("budget: unknown metric 'mem'")
    assert filename_error("a.py") is None and filename_error("a\x01.py") == filename_error("a" * 256)
    assert entry_error("a" * 1000) is None and entry_error("a" * 1001) is not None
    assert arguments('["--rows", "10"]') == ["--rows", "10"]
    for bad in ("[1]", '"a"', "nope", '["a\\u0000"]', json.dumps(["a"] * 1001), json.dumps(["a" * 100_001])):
        with pytest.raises(ValueError, match=r"^args: "):
            arguments(bad)


def test_the_page_reads_a_stored_verdict_through_the_gate() -> None:
    pytest.importorskip("fastapi")
    from memgauge.gate import judge, parse_budget, verdict_json
    from memgauge.model import CpuTimes, ExitStatus, Peak, Profile
    from memgauge.service._models import Submission
    from memgauge.service._ui._detail import Check, checks

    profile = Profile(
        command=["python", "a.py"],
        exit=ExitStatus(code=0),
        wall_seconds=12.3,
        cpu=CpuTimes(1.0, 0.5),
        peak=Peak(resident_bytes=730 << 20, method="cgroup-v2"),
    )
    verdict = judge(profile, parse_budget("rss=512MiB wall=60s gpu=1GiB"))
    stored = Submission(verdict_json=json.dumps(verdict_json(verdict)))
    assert checks(stored) == [
        Check("rss", "fail", "512 MiB", "730 MiB", "-218 MiB", ""),
        Check("wall", "pass", "1 min 0 s", "12.30 s", "47.70 s", ""),
        Check(
            "gpu",
            "unmeasured",
            "1.0 GiB",
            "—",
            "—",
            "no GPU figure in this profile (no GPU used by the run)",
        ),
    ]
    # no verdict, or one that cannot be read: the page shows the rest of the submission
    for text in (None, "", "not json", "[]", '{"results": [{"metric": "mem"}]}'):
        assert checks(Submission(verdict_json=text)) == []
