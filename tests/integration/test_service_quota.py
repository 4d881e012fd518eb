"""A token's quota of waiting submissions is exact under concurrency, on SQLite and PostgreSQL:
with ``--max-queued 100``, 160 submissions sent at once admit exactly 100 (the check and the
insert are one transaction that first locks the token's row: ``store.add_submission``)."""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.service_server import Server, admin_token, make_policy, make_token, postgres_database

pytest.importorskip("uvicorn")

API = "/api/v1"
QUOTA = 100
SENT = 160


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_queue_quota_of_100_never_admits_101(tmp_path: Path, backend: str) -> None:
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(postgres_database()) if backend == "postgres" else None
        server = Server(tmp_path / "data", url, admin_token(), extra=["--max-queued", str(QUOTA)])
        server.start()
        stack.callback(server.stop)
        policy = make_policy(server, "wall=10min")
        token = make_token(server)[1]
        # none finishes while the test runs: every admitted submission stays queued or running
        program = b"import time\ntime.sleep(600)\n"

        def send(_: int) -> int:
            with server.client(token) as c:
                r = c.post(f"{API}/submissions", data={"policy": policy}, files={"file": ("s.py", program)})
            assert r.status_code in (201, 429), r.text
            return int(r.status_code)

        with ThreadPoolExecutor(max_workers=40) as pool:
            codes = list(pool.map(send, range(SENT)))
        assert (codes.count(201), codes.count(429)) == (QUOTA, SENT - QUOTA)
        with server.client(token) as c:
            page = c.get(f"{API}/submissions", params={"limit": 200}).json()
            assert page["total"] == QUOTA
            for item in page["items"]:
                c.post(f"{API}/submissions/{item['id']}/cancel")
