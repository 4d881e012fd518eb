"""Admission against one database from several server processes at once: a machine with room for
one share, and as many processes as there are submissions storing their passes together, each
through its own connection pool (as separate servers sharing a PostgreSQL database do). The
machine's row is locked for the judgement (``SELECT ... FOR UPDATE``): exactly one is admitted.
SQLite is one server's database; its admissions are put in a row within that server's process."""

from __future__ import annotations

import json
import multiprocessing
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sqlalchemy")

from memgauge.analysis import kernel_bytes_per_group
from memgauge.service import _machines as machines
from memgauge.service import _store as store
from memgauge.service._db import database_url, open_database
from tests.conftest import PROGRAMS, run_memgauge
from tests.service_server import postgres_database

PROCESSES = 4


def _store_pass(url: str, sub_id: str, worker: str, profile: str, start: Any) -> None:
    from memgauge.service import _admission as admission

    db = open_database(url)
    sub = store.get_submission(db, sub_id)
    assert sub is not None
    values = {"status": "done", "verdict": "pass", "reason": "within budget", "profile": profile}
    start.wait()
    admission.finish(db, sub, worker, values)
    db.close()


@pytest.mark.skipif(sys.platform != "linux", reason="needs fork-free child processes on Linux")
def test_servers_storing_at_once_never_admit_past_the_machine(tmp_path: Path) -> None:
    ran = run_memgauge([str(PROGRAMS / "service_hold.py"), "24", "0.1"], tmp_path)
    assert ran.returncode == 0 and ran.profile is not None, ran.stderr
    profile = json.dumps(ran.profile)
    with postgres_database() as pg:
        url = database_url(pg, str(tmp_path))
        db = open_database(url)
        try:
            token, _ = store.create_token(db, "t", "submitter")
            # room for one share (the run's container need and the kernel's batch per CPU), not two
            peak = ran.profile["peak"]
            share = int(peak.get("needs_bytes") or peak["resident_bytes"]) + kernel_bytes_per_group(2)
            memory = share * 3 // 2
            machines.put_machine(db, "edge", memory, 2, "")
            new = store.NewSubmission(
                token.id,
                "p",
                "rss=1GiB",
                "hold.py",
                "py",
                "hold.py",
                [],
                b"",
                machine="edge",
                admit_rule="worst",
            )
            ids = [store.add_submission(db, new).id for _ in range(PROCESSES)]
            claimed = [store.claim_queued(db, f"server-{i}", 1)[0] for i in range(PROCESSES)]
            spawn = multiprocessing.get_context("spawn")
            start = spawn.Barrier(PROCESSES)  # every child connected and ready, then all at once
            children = [
                spawn.Process(target=_store_pass, args=(url, sub.id, sub.worker, profile, start))
                for sub in claimed
            ]
            for child in children:
                child.start()
            for child in children:
                child.join(120)
                assert child.exitcode == 0
            subs = [store.get_submission(db, i) for i in ids]
            verdicts = sorted(s.verdict or "" for s in subs if s is not None)
            assert verdicts == ["fail"] * (PROCESSES - 1) + ["pass"]
            (held,) = machines.held_on(db, "edge")
            assert held.verdict == "pass" and held.share_bytes is not None
            assert held.share_bytes == share
        finally:
            db.close()
