"""The validation service end to end: real ``memgauge serve`` processes, real HTTP, real sandboxed
runs, on SQLite and on PostgreSQL (skipped without one; MEMGAUGE_REQUIRE_POSTGRES=1 makes that a
failure).

Most tests share one server per backend (``--workers 2``, its data directory outside /tmp); the
restart tests and the upload-limit test start their own. Runs are sandboxed
(``memgauge.isolation._sandbox``); the processes of a run are found through /proc, by the variable
that marks them (``MEMGAUGE_SERVICE_SUBMISSION``) or by the uploaded program's unique name.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import uuid
import zipfile
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

import httpx

from memgauge.isolation._sandbox import RUN_PREFIX
from tests.conftest import MIB, PROGRAMS
from tests.service_server import Server, admin_token, free_port, make_policy, make_token, postgres_database

API = "/api/v1"
MARKER = "MEMGAUGE_SERVICE_SUBMISSION"
FINISHED = ("done", "failed", "cancelled")
BACKENDS = ["sqlite", "postgres"]


# -- servers ---------------------------------------------------------------------------------------


class Servers:
    """One shared server per backend, started when a test first asks for it, stopped at the end of
    the module. A backend that cannot start (no PostgreSQL) skips every test that asks again."""

    def __init__(self, tmp: pytest.TempPathFactory) -> None:
        self.tmp = tmp
        self.stack = ExitStack()
        self.started: dict[str, Server] = {}
        self.skipped: dict[str, str] = {}

    def get(self, backend: str) -> Server:
        if backend in self.skipped:
            pytest.skip(self.skipped[backend])
        if backend not in self.started:
            try:
                self.started[backend] = self.stack.enter_context(
                    serving(self.scratch(backend), backend, ["--workers", "2"])
                )
            except pytest.skip.Exception as e:
                self.skipped[backend] = str(e)
                raise
        return self.started[backend]

    def scratch(self, backend: str) -> Path:
        """Where a shared server keeps its data: outside /tmp when possible, because every run has
        a private /tmp of its own, which would hide a data directory there whatever else the
        sandbox does (or fails to do)."""
        for base in ("/var/lib", "/srv", "/opt"):
            if os.path.isdir(base) and os.access(base, os.W_OK):
                path = Path(tempfile.mkdtemp(prefix=f"memgauge-e2e-{backend}-", dir=base))
                self.stack.callback(shutil.rmtree, path, ignore_errors=True)
                return path
        return self.tmp.mktemp(f"shared-{backend}")


class _Serving:
    """A context manager: a started server (and its PostgreSQL database), stopped afterwards."""

    def __init__(self, tmp: Path, backend: str, extra: list[str]) -> None:
        self.tmp, self.backend, self.extra = tmp, backend, extra
        self.stack = ExitStack()

    def __enter__(self) -> Server:
        self.tmp.mkdir(parents=True, exist_ok=True)
        with ExitStack() as stack:
            url = stack.enter_context(postgres_database()) if self.backend == "postgres" else None
            server = Server(self.tmp / "data", url, admin_token(), extra=self.extra).start()
            stack.callback(server.stop)
            self.stack = stack.pop_all()
        return server

    def __exit__(self, *exc: object) -> None:
        self.stack.close()


def serving(tmp: Path, backend: str, extra: list[str]) -> _Serving:
    return _Serving(tmp, backend, extra)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    registry = Servers(tmp_path_factory)
    with registry.stack:
        yield registry


@pytest.fixture(params=BACKENDS)
def server(request: pytest.FixtureRequest, servers: Servers) -> Server:
    """The shared server of each backend."""
    return servers.get(request.param)


@pytest.fixture
def sqlite_server(servers: Servers) -> Server:
    """The shared SQLite server, for what does not depend on the database."""
    return servers.get("sqlite")


def restarted(old: Server) -> Server:
    """A new server on the same data directory and database (and admin token)."""
    return Server(old.data_dir, old.db, old.admin, extra=old.extra).start()


# -- the API ---------------------------------------------------------------------------------------


def detail(response: httpx.Response) -> str:
    body = response.json()
    return body["detail"] if isinstance(body.get("detail"), str) else json.dumps(body.get("detail"))


def post(
    client: httpx.Client,
    filename: str,
    data: bytes,
    policy: str,
    args: list[str] | None = None,
    entry: str | None = None,
) -> httpx.Response:
    form = {"policy": policy, "args": json.dumps(args or [])}
    if entry is not None:
        form["entry"] = entry
    return client.post(f"{API}/submissions", data=form, files={"file": (filename, data)})


def submit(
    client: httpx.Client,
    filename: str,
    data: bytes,
    policy: str,
    args: list[str] | None = None,
    entry: str | None = None,
) -> dict[str, Any]:
    r = post(client, filename, data, policy, args, entry)
    assert r.status_code == 201, r.text
    sub: dict[str, Any] = r.json()
    return sub


def get(client: httpx.Client, sub_id: str) -> dict[str, Any]:
    r = client.get(f"{API}/submissions/{sub_id}")
    assert r.status_code == 200, r.text
    sub: dict[str, Any] = r.json()
    return sub


def wait_for(
    client: httpx.Client, sub_id: str, statuses: tuple[str, ...] = FINISHED, timeout: float = 90.0
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        sub = get(client, sub_id)
        if sub["status"] in statuses:
            return sub
        if time.monotonic() > deadline:
            raise AssertionError(f"submission {sub_id} is still {sub['status']} after {timeout} s: {sub}")
        time.sleep(0.1)


def output(client: httpx.Client, sub_id: str) -> str:
    r = client.get(f"{API}/submissions/{sub_id}/output")
    assert r.status_code == 200, r.text
    return r.text


def total(server: Server, **filters: Any) -> int:
    with server.client() as c:
        r = c.get(f"{API}/submissions", params={"limit": 1, **filters})
    assert r.status_code == 200, r.text
    return int(r.json()["total"])


def program(name: str) -> bytes:
    return (PROGRAMS / f"service_{name}.py").read_bytes()


def cancel_all(server: Server, ids: list[str]) -> None:
    """Cancel what a test left queued or running, so that the next test starts on a free server."""
    with server.client() as c:
        for sub_id in ids:
            c.post(f"{API}/submissions/{sub_id}/cancel")
        for sub_id in ids:
            wait_for(c, sub_id, timeout=60)


# -- uploads ---------------------------------------------------------------------------------------


def zip_bytes(files: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o120777 << 16) | 0x20  # a symbolic link, as Info-ZIP writes one
            z.writestr(info, target)
    return buf.getvalue()


def tar_gz_bytes(files: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            t.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            t.addfile(info)
    return buf.getvalue()


@functools.cache
def zip_bomb(claimed_honestly: bool) -> bytes:
    """16 MiB of zeros in ~16 KiB (past the 200:1 ratio), or 80 MiB whose header says so (past the
    64 MiB unpacked limit before anything is inflated)."""
    return zip_bytes({"main.py": b"print(1)\n", "zeros.bin": bytes((80 if claimed_honestly else 16) * MIB)})


@functools.cache
def tar_bomb() -> bytes:
    return tar_gz_bytes({"main.py": b"print(1)\n", "zeros.bin": bytes(16 * MIB)})


# -- the database and processes, seen from outside the server ---------------------------------------


def db_query(server: Server, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """``sql`` with ``?`` placeholders, on the server's own database, read directly."""
    if server.db is None:
        con = sqlite3.connect(f"file:{server.data_dir / 'memgauge.db'}?mode=ro", uri=True, timeout=30)
        try:
            return list(con.execute(sql, params))
        finally:
            con.close()
    import psycopg

    with psycopg.connect(server.db, connect_timeout=10) as con:
        return list(con.execute(sql.replace("?", "%s"), params))  # type: ignore[call-overload]


def db_submission(server: Server, sub_id: str) -> dict[str, Any] | None:
    columns = ("id", "status", "attempts", "reason", "worker", "owner_id")
    rows = db_query(server, f"SELECT {', '.join(columns)} FROM submissions WHERE id = ?", (sub_id,))
    return dict(zip(columns, rows[0], strict=True)) if rows else None


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def cmdline(pid: int | str) -> str:
    return _read(f"/proc/{pid}/cmdline").replace(b"\0", b" ").decode(errors="replace").strip()


def processes(sub_id: str | None = None, contains: str | None = None) -> dict[int, str]:
    """Live (not zombie) processes carrying ``sub_id``'s marker variable, or whose command line
    contains ``contains``: pid -> command line."""
    marker = f"{MARKER}={sub_id}".encode() if sub_id else None
    found: dict[int, str] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        command = cmdline(name)
        stat = _read(f"/proc/{name}/stat").decode(errors="replace")
        if not command or not stat or stat.rpartition(")")[2].split()[:1] == ["Z"]:
            continue
        hit = marker is not None and marker in _read(f"/proc/{name}/environ").split(b"\0")
        if hit or (contains is not None and contains in command):
            found[int(name)] = command
    return found


def alive(pids: set[int] | dict[int, str]) -> set[int]:
    left = set()
    for pid in pids:
        stat = _read(f"/proc/{pid}/stat").decode(errors="replace")
        if stat and stat.rpartition(")")[2].split()[:1] != ["Z"]:
            left.add(pid)
    return left


def wait_until(what: str, check: Any, timeout: float = 30.0, every: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(every)


def program_process(name: str) -> int | None:
    """The process running the uploaded program ``name`` (not the ``memgauge run`` around it)."""
    found = processes(contains=name)
    programs = [pid for pid, cmd in found.items() if "memgauge run" not in cmd]
    return max(programs) if programs else None


def parent(pid: int) -> int | None:
    for line in _read(f"/proc/{pid}/status").decode(errors="replace").splitlines():
        if line.startswith("PPid:"):
            return int(line.split()[1]) or None
    return None


def run_process(sub_id: str) -> int:
    """The ``memgauge run`` process of ``sub_id``'s run (waits for it): one carrying the marker,
    or else the nearest ``memgauge run`` above a process that does (the sandbox's runner gets
    only what it needs of the environment)."""

    def find() -> int | None:
        marked = processes(sub_id)
        for pid, cmd in marked.items():
            if "memgauge run" in cmd:
                return pid
        for pid in marked:
            up = parent(pid)
            while up is not None:
                if "memgauge run" in _read(f"/proc/{up}/cmdline").replace(b"\0", b" ").decode(
                    errors="replace"
                ):
                    return up
                up = parent(up)
        return None

    return int(wait_until(f"the memgauge run process of {sub_id}", find))


# == auth ==========================================================================================


def test_auth_needs_a_valid_token(server: Server) -> None:
    assert httpx.get(server.url + "/healthz", timeout=10).status_code == 200
    before = total(server)
    routes = [
        ("GET", f"{API}/me"),
        ("GET", f"{API}/policies"),
        ("GET", f"{API}/submissions"),
        ("GET", f"{API}/tokens"),
        ("POST", f"{API}/submissions"),
        ("GET", f"{API}/submissions/{uuid.uuid4().hex}"),
    ]
    unknown = "mg_" + "A" * 43
    for method, path in routes:
        none = httpx.request(method, server.url + path, timeout=10)
        assert none.status_code == 401, (path, none.text)
        assert "token is needed" in detail(none)
        assert none.headers.get("www-authenticate") == "Bearer"
        bad = httpx.request(method, server.url + path, headers={"Authorization": f"Bearer {unknown}"})
        assert bad.status_code == 401, (path, bad.text)
        assert "not valid" in detail(bad)
        basic = httpx.request(method, server.url + path, headers={"Authorization": f"Basic {server.admin}"})
        assert basic.status_code == 401, (path, basic.text)
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {unknown}"}) as c:
        assert post(c, "a.py", b"print(1)\n", "any").status_code == 401
    assert total(server) == before


def test_submitter_and_admin_roles(server: Server) -> None:
    _, secret = make_token(server, "submitter")
    policy = make_policy(server, "rss=256MiB")
    with server.client(secret) as c:
        me = c.get(f"{API}/me").json()
        assert me["role"] == "submitter"
        assert c.get(f"{API}/policies").status_code == 200
        assert c.get(f"{API}/policies/{policy}").status_code == 200
        writes = [
            c.put(f"{API}/policies/{policy}", json={"budget": "rss=1GiB"}),
            c.put(f"{API}/policies/new-{uuid.uuid4().hex[:6]}", json={"budget": "rss=1GiB"}),
            c.delete(f"{API}/policies/{policy}"),
            c.get(f"{API}/tokens"),
            c.post(f"{API}/tokens", json={"name": "mine", "role": "admin"}),
            c.delete(f"{API}/tokens/{me['id']}"),
        ]
        for r in writes:
            assert r.status_code == 403, (r.request.method, r.request.url, r.text)
            assert "only an admin" in detail(r)
    with server.client() as c:
        assert c.get(f"{API}/me").json()["role"] == "admin"
        assert c.get(f"{API}/policies/{policy}").json()["budget"] == "rss=256MiB"  # the 403 changed nothing
        assert c.get(f"{API}/tokens").status_code == 200


def test_a_submitter_sees_only_its_own_submissions(server: Server) -> None:
    policy = make_policy(server, "rss=256MiB")
    a_id, a = make_token(server)
    b_id, b = make_token(server)
    with server.client(a) as ca, server.client(b) as cb, server.client() as admin:
        mine = submit(ca, "a.py", b"print('a')\n", policy)
        theirs = submit(cb, "b.py", b"print('b')\n", policy)
        assert (mine["owner"], theirs["owner"]) == (a_id, b_id)
        page = ca.get(f"{API}/submissions", params={"limit": 500}).json()
        assert [s["id"] for s in page["items"]] == [mine["id"]]
        assert page["total"] == 1
        # asking for another owner does not widen a submitter's view
        assert [s["id"] for s in ca.get(f"{API}/submissions", params={"owner": b_id}).json()["items"]] == [
            mine["id"]
        ]
        for path in ("", "/output", "/profile", "/report", "/verdict"):
            r = ca.get(f"{API}/submissions/{theirs['id']}{path}")
            assert r.status_code == 404, (path, r.text)
            assert theirs["id"] in detail(r)
        assert ca.post(f"{API}/submissions/{theirs['id']}/cancel").status_code == 404
        assert ca.get(f"{API}/submissions/{mine['id']}").status_code == 200
        assert admin.get(f"{API}/submissions/{theirs['id']}").status_code == 200
        by_owner = admin.get(f"{API}/submissions", params={"owner": b_id}).json()
        assert [s["id"] for s in by_owner["items"]] == [theirs["id"]]
        for sub in (mine, theirs):
            wait_for(admin, sub["id"])


def test_a_revoked_token_is_refused(server: Server) -> None:
    token_id, secret = make_token(server)
    with server.client(secret) as c, server.client() as admin:
        assert c.get(f"{API}/me").status_code == 200
        assert admin.delete(f"{API}/tokens/{token_id}").status_code == 204
        r = c.get(f"{API}/me")
        assert r.status_code == 401
        assert "revoked" in detail(r)
        listed = {t["id"]: t for t in admin.get(f"{API}/tokens").json()}
        assert listed[token_id]["revoked_at"] is not None
        assert admin.delete(f"{API}/tokens/{2**31 - 1}").status_code == 404


def test_the_last_admin_token_cannot_be_revoked(server: Server) -> None:
    other_id, other = make_token(server, "admin")
    with server.client() as admin:
        me = admin.get(f"{API}/me").json()
        # with two admin tokens one may go; then the other is the last
        assert admin.delete(f"{API}/tokens/{other_id}").status_code == 204
        for t in admin.get(f"{API}/tokens").json():
            if t["role"] == "admin" and t["revoked_at"] is None and t["id"] != me["id"]:
                assert admin.delete(f"{API}/tokens/{t['id']}").status_code == 204
        r = admin.delete(f"{API}/tokens/{me['id']}")
        assert r.status_code == 409, r.text
        assert "last admin" in detail(r)
        assert admin.get(f"{API}/me").status_code == 200
    with server.client(other) as c:
        assert c.get(f"{API}/me").status_code == 401


def test_tokens_are_stored_hashed(server: Server) -> None:
    _, secret = make_token(server)
    with server.client() as admin:
        listed = admin.get(f"{API}/tokens").json()
    assert secret not in json.dumps(listed) and server.admin not in json.dumps(listed)
    assert any(t["prefix"] == secret[:9] for t in listed)
    stored = repr(db_query(server, "SELECT * FROM tokens"))
    assert hashlib.sha256(secret.encode()).hexdigest() in stored  # what is kept instead
    for s in (secret, server.admin, secret[3:], server.admin[3:]):
        assert s not in stored
    if server.db is None:  # every byte of the SQLite files, the journal included
        raw = b"".join(p.read_bytes() for p in server.data_dir.iterdir() if p.name.startswith("memgauge.db"))
        assert hashlib.sha256(secret.encode()).hexdigest().encode() in raw
        for s in (secret, server.admin):
            assert s[3:].encode() not in raw


# == policies ======================================================================================


def test_policies_crud(server: Server) -> None:
    name = f"crud-{uuid.uuid4().hex[:8]}"
    with server.client() as c:
        assert c.get(f"{API}/policies/{name}").status_code == 404
        r = c.put(f"{API}/policies/{name}", json={"budget": "rss=256MiB wall=30s", "description": "first"})
        assert r.status_code == 201, r.text
        body = r.json()
        assert body["budget"] == "rss=256MiB wall=30s" and body["description"] == "first"
        assert {(x["metric"], x["value"]) for x in body["limits"]} == {("rss", 256 * MIB), ("wall", 30.0)}
        r = c.put(f"{API}/policies/{name}", json={"budget": "wall=60s train.rss=1GiB"})
        assert r.status_code == 200, r.text
        got = c.get(f"{API}/policies/{name}").json()
        assert got["budget"] == "wall=60s train.rss=1GiB"
        assert got["limits"] == [
            {
                "key": "wall",
                "metric": "wall",
                "phase": None,
                "value": 60.0,
                "unit": "seconds",
                "lower": False,
            },
            {
                "key": "train.rss",
                "metric": "rss",
                "phase": "train",
                "value": 1024 * MIB,
                "unit": "bytes",
                "lower": False,
            },
        ]
        assert name in [p["name"] for p in c.get(f"{API}/policies").json()]
        assert c.delete(f"{API}/policies/{name}").status_code == 204
        assert c.get(f"{API}/policies/{name}").status_code == 404
        assert c.delete(f"{API}/policies/{name}").status_code == 404
        assert name not in [p["name"] for p in c.get(f"{API}/policies").json()]


@pytest.mark.parametrize(
    ("budget", "message"),
    [
        ("rss=lots", "not a number in 'rss=lots'"),
        ("foo=1", "unknown metric 'foo'"),
        ("rss=-1MiB", "negative limit"),
        ("rss=1MiB rss=", "rss="),
    ],
)
def test_a_bad_budget_is_refused_with_the_reason(sqlite_server: Server, budget: str, message: str) -> None:
    name = f"bad-{uuid.uuid4().hex[:8]}"
    with sqlite_server.client() as c:
        r = c.put(f"{API}/policies/{name}", json={"budget": budget})
        assert r.status_code == 422, r.text
        assert message in detail(r)
        assert c.get(f"{API}/policies/{name}").status_code == 404


def test_a_bad_policy_request_is_refused(sqlite_server: Server) -> None:
    with sqlite_server.client() as c:
        assert c.put(f"{API}/policies/x", json={"budget": ""}).status_code == 422
        assert c.put(f"{API}/policies/x", json={}).status_code == 422
        assert c.put(f"{API}/policies/.hidden", json={"budget": "rss=1GiB"}).status_code == 422
        assert c.put(f"{API}/policies/{'x' * 101}", json={"budget": "rss=1GiB"}).status_code == 422


# == uploads =======================================================================================

_MAIN = b"print('main')\n"

REFUSED: dict[str, tuple[str, Any, dict[str, str], str]] = {
    # case: (file name, data (or a callable making it), form fields, what the message says)
    "zip traversal": ("p.zip", lambda: zip_bytes({"main.py": _MAIN, "../evil.py": _MAIN}), {}, "'..'"),
    "tar traversal": (
        "p.tar.gz",
        lambda: tar_gz_bytes({"main.py": _MAIN, "a/../../x.py": _MAIN}),
        {},
        "'..'",
    ),
    "tar absolute": ("p.tar.gz", lambda: tar_gz_bytes({"/tmp/evil.py": _MAIN}), {}, "absolute path"),
    "zip symlink": (
        "p.zip",
        lambda: zip_bytes({"main.py": _MAIN}, {"data": "/etc/shadow"}),
        {},
        "symbolic link",
    ),
    "tar symlink": ("p.tar.gz", lambda: tar_gz_bytes({"main.py": _MAIN}, {"d": "/"}), {}, "symbolic link"),
    "zip bomb": ("p.zip", lambda: zip_bomb(False), {}, "compression bomb"),
    "zip bomb, honest header": ("p.zip", lambda: zip_bomb(True), {}, "over the limit"),
    "tar.gz bomb": ("p.tar.gz", tar_bomb, {}, "compression bomb"),
    "unknown policy": ("a.py", lambda: _MAIN, {"policy": "no-such-policy"}, "no policy 'no-such-policy'"),
    "missing entry": ("p.zip", lambda: zip_bytes({"main.py": _MAIN}), {"entry": "nope.py"}, "no such file"),
    "entry outside": ("p.zip", lambda: zip_bytes({"main.py": _MAIN}), {"entry": "../main.py"}, "'..'"),
    "entry not .py": ("p.zip", lambda: zip_bytes({"main.py": _MAIN, "x.sh": b""}), {"entry": "x.sh"}, ".py"),
    "ambiguous entry": (
        "p.zip",
        lambda: zip_bytes({"a.py": _MAIN, "b.py": _MAIN}),
        {},
        "name the entry point",
    ),
    "entry for a .py": ("a.py", lambda: _MAIN, {"entry": "b.py"}, "its own entry point"),
    "not a program": ("a.exe", lambda: b"MZ", {}, "not an accepted upload"),
    "binary .py": ("a.py", lambda: b"\x00\x01", {}, "NUL byte"),
    "fake zip": ("p.zip", lambda: b"print(1)\n", {}, "expected a zip archive"),
    "bad script name": ("-rf.py", lambda: _MAIN, {}, "not an accepted script name"),
    "args not JSON": ("a.py", lambda: _MAIN, {"args": "--rows 3"}, "args: a JSON array of strings"),
    "args not strings": ("a.py", lambda: _MAIN, {"args": "[1, 2]"}, "args: a JSON array of strings"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_refused_upload_says_why_and_creates_no_submission(server: Server, case: str) -> None:
    filename, data, fields, message = REFUSED[case]
    policy = make_policy(server, "rss=256MiB", name="refusals")
    form = {"policy": policy, "args": "[]", **fields}
    before = total(server)
    with server.client() as c:
        r = c.post(f"{API}/submissions", data=form, files={"file": (filename, data())})
    assert 400 <= r.status_code < 500, r.text
    assert r.status_code == 422, r.text
    assert message in detail(r), detail(r)
    assert total(server) == before


def test_an_upload_over_the_limit_is_refused_with_413(tmp_path: Path) -> None:
    with serving(tmp_path, "sqlite", ["--max-upload", "64KiB"]) as server, server.client() as c:
        policy = make_policy(server, "rss=256MiB")
        small = post(c, "ok.py", b"print(1)\n" + b"#" * 60_000, policy)
        assert small.status_code == 201, small.text
        big = b"#" * MIB  # under the request limit (the upload limit plus 1 MiB for the form) ...
        r = post(c, "big.py", big, policy)
        assert r.status_code == 413, r.text
        assert "over the limit of 65536 bytes" in detail(r)
        r = post(c, "big.zip", zip_bytes({"main.py": b"x=1\n" * 40_000, "r.bin": os.urandom(MIB)}), policy)
        assert r.status_code == 413, r.text
        huge = post(c, "huge.py", big * 3, policy)  # ... and over it: refused before it is read
        assert huge.status_code == 413, huge.text
        assert "over the limit of 1114112 bytes" in detail(huge)  # 64 KiB and 1 MiB for the form
        assert total(server) == 1


def test_py_zip_and_tar_gz_projects_run_with_their_arguments(server: Server) -> None:
    policy = make_policy(server, "rss=256MiB wall=60s")
    args = ["--rows", "3", "two words", "ünï", "", "-x", "--", "$HOME", "'quoted'"]
    code = program("args")
    project = {"app/main.py": code, "app/helper.py": b"VALUE = 'from the helper'\n", "README": b"hi\n"}
    uploads = [
        ("prog.py", code, None, None),
        ("proj.zip", zip_bytes(project), "app/main.py", "from the helper"),
        ("proj.tar.gz", tar_gz_bytes(project), "app/main.py", "from the helper"),
        ("default.zip", zip_bytes({"main.py": code, "helper.py": b"VALUE = 1\n", "lib/x.py": b""}), None, 1),
        ("only.tar.gz", tar_gz_bytes({"run.py": code, "data/x.py": b""}), None, None),
    ]
    with server.client() as c:
        subs = [(submit(c, name, data, policy, args, entry), helper) for name, data, entry, helper in uploads]
        assert [s["entry"] for s, _ in subs] == ["prog.py", "app/main.py", "app/main.py", "main.py", "run.py"]
        assert [s["kind"] for s, _ in subs] == ["py", "zip", "tar.gz", "zip", "tar.gz"]
        for sub, helper in subs:
            done = wait_for(c, sub["id"])
            text = output(c, sub["id"])
            assert (done["status"], done["verdict"]) == ("done", "pass"), (done, text)
            assert done["args"] == args
            line = next(x for x in text.splitlines() if x.startswith("ARGS "))
            assert json.loads(line[5:]) == {"args": args, "helper": helper}, text


def test_an_entry_that_looks_like_an_option_runs_as_a_file(sqlite_server: Server) -> None:
    """An archive member named like a ``memgauge run`` option is still the file it names."""
    policy = make_policy(sqlite_server, "rss=256MiB")
    dash = b"import sys\nprint('DASH ENTRY', sys.argv[1:])\n"
    with sqlite_server.client() as c:
        subs = [
            submit(c, "a.zip", zip_bytes({"-x.py": dash}), policy, ["a"]),
            submit(
                c,
                "b.zip",
                zip_bytes({"--json=x.py": dash, "main.py": _MAIN}),
                policy,
                ["main.py"],
                "--json=x.py",
            ),
            submit(
                c, "c.tar.gz", tar_gz_bytes({"-mmain.py": dash, "main.py": _MAIN}), policy, [], "-mmain.py"
            ),
        ]
        for sub, args in zip(subs, (["a"], ["main.py"], []), strict=True):
            done = wait_for(c, sub["id"])
            text = output(c, sub["id"])
            assert (done["status"], done["verdict"]) == ("done", "pass"), (done, text)
            assert f"DASH ENTRY {args}" in text and "main" not in text.replace("main.py", ""), text


# == a submission is stored before it is acknowledged ==============================================


def test_a_submission_is_stored_before_it_is_acknowledged(server: Server) -> None:
    policy = make_policy(server, "rss=256MiB")
    with server.client() as c:
        sub = submit(c, "stored.py", b"print('stored')\n", policy, ["x"])
        row = db_submission(server, sub["id"])  # read straight from the database, not through the API
        listed = c.get(f"{API}/submissions", params={"policy": policy}).json()
        wait_for(c, sub["id"])
    assert row is not None, "acknowledged but not in the database"
    assert row["owner_id"] == sub["owner"]
    assert sub["status"] == "queued" and sub["attempts"] == 0
    assert [s["id"] for s in listed["items"]] == [sub["id"]]
    stored = db_query(server, "SELECT upload, args FROM submissions WHERE id = ?", (sub["id"],))
    assert bytes(stored[0][0]) == b"print('stored')\n" and json.loads(stored[0][1]) == ["x"]


# == lists =========================================================================================


def test_list_filters_by_owner_and_policy_and_pages(server: Server) -> None:
    policy, other_policy = make_policy(server, "rss=256MiB"), make_policy(server, "rss=512MiB")
    a_id, a = make_token(server)
    b_id, b = make_token(server)
    ids: dict[str, list[str]] = {"a": [], "b": [], "other": []}
    with server.client(a) as ca, server.client(b) as cb, server.client() as admin:
        for i in range(5):
            ids["a"].append(submit(ca, f"a{i}.py", b"pass\n", policy)["id"])
        for i in range(2):
            ids["b"].append(submit(cb, f"b{i}.py", b"pass\n", policy)["id"])
        ids["other"].append(submit(ca, "o.py", b"pass\n", other_policy)["id"])

        def listing(client: httpx.Client, **params: Any) -> dict[str, Any]:
            r = client.get(f"{API}/submissions", params=params)
            assert r.status_code == 200, r.text
            page: dict[str, Any] = r.json()
            return page

        assert listing(admin, policy=policy, limit=500)["total"] == 7
        assert listing(admin, policy=other_policy)["total"] == 1
        assert {s["id"] for s in listing(admin, policy=policy, owner=a_id)["items"]} == set(ids["a"])
        assert {s["id"] for s in listing(admin, policy=policy, owner=b_id)["items"]} == set(ids["b"])
        assert {s["id"] for s in listing(ca, limit=500)["items"]} == {*ids["a"], *ids["other"]}
        assert {s["id"] for s in listing(cb, policy=other_policy)["items"]} == set()
        # pages: newest first, no repeats, no gaps, the same total on every page
        pages = [listing(admin, policy=policy, limit=3, offset=o) for o in (0, 3, 6, 9)]
        assert [p["total"] for p in pages] == [7, 7, 7, 7]
        assert [(p["limit"], p["offset"]) for p in pages] == [(3, 0), (3, 3), (3, 6), (3, 9)]
        assert [len(p["items"]) for p in pages] == [3, 3, 1, 0]
        paged = [s["id"] for p in pages for s in p["items"]]
        assert paged == list(reversed([*ids["a"], *ids["b"]]))
        whole = [s["id"] for s in listing(admin, policy=policy, limit=500)["items"]]
        assert whole == paged
        for bad in ({"limit": 0}, {"limit": 501}, {"offset": -1}, {"status": "nope"}, {"verdict": "maybe"}):
            assert admin.get(f"{API}/submissions", params=bad).status_code == 422, bad
        for sub_id in [*ids["a"], *ids["b"], *ids["other"]]:
            wait_for(admin, sub_id)


def test_list_filters_by_status_and_verdict(server: Server) -> None:
    policy = make_policy(server, "rss=128MiB")
    with server.client() as c:
        subs = [
            submit(c, "ok.py", b"print('ok')\n", policy),
            submit(c, "over.py", program("hold"), policy, ["200", "0"]),
            submit(c, "crash.py", program("crash"), policy, ["exit", "4"]),
            submit(c, "ok2.py", b"print('ok')\n", policy),
        ]
        finished = {s["id"]: wait_for(c, s["id"]) for s in subs}
        assert {s["verdict"] for s in finished.values()} == {"pass", "fail", "error"}
        for field, values in (
            ("status", (*FINISHED, "queued", "running")),
            ("verdict", ("pass", "fail", "error")),
        ):
            for value in values:
                page = c.get(f"{API}/submissions", params={"policy": policy, field: value}).json()
                expected = {i for i, s in finished.items() if s[field] == value}
                assert {s["id"] for s in page["items"]} == expected, (field, value)
                assert page["total"] == len(expected)


# == runs and verdicts =============================================================================


def test_within_budget_passes(server: Server) -> None:
    policy = make_policy(server, "rss=256MiB wall=60s")
    with server.client() as c:
        sub = wait_for(c, submit(c, "hold50.py", program("hold"), policy, ["50", "0.3"])["id"])
        text = output(c, sub["id"])
        assert (sub["status"], sub["verdict"], sub["exit_code"]) == ("done", "pass", 0), (sub, text)
        assert "HELD 50 MiB" in text and "DONE" in text
        assert 50 * MIB <= sub["peak_rss_bytes"] < 256 * MIB
        assert 0.3 <= sub["wall_seconds"] < 60
        assert sub["attempts"] == 1 and sub["started_at"] and sub["finished_at"]
        verdict = c.get(f"{API}/submissions/{sub['id']}/verdict").json()
        assert verdict["ok"] is True, verdict
        # the submission's memory figure is the one its verdict's rss judged: what a container needs
        rss = next(r for r in verdict["results"] if r["metric"] == "rss")
        profile = c.get(f"{API}/submissions/{sub['id']}/profile").json()
        assert sub["peak_rss_bytes"] == rss["measured"] == profile["peak"]["needs_bytes"] > 0


def test_over_budget_fails_and_says_why(server: Server) -> None:
    """300 MiB under rss=128MiB: the sandbox's memory limit (the policy's) stops it, and the reason
    says so; the peak is the limit's."""
    policy = make_policy(server, "rss=128MiB")
    with server.client() as c:
        sub = wait_for(c, submit(c, "hold300.py", program("hold"), policy, ["300", "0.3"])["id"])
        text = output(c, sub["id"])
        peak = c.get(f"{API}/submissions/{sub['id']}/profile").json()["peak"]
    assert (sub["status"], sub["verdict"]) == ("done", "fail"), (sub, text)
    reason = sub["reason"]
    assert "OVER BUDGET" in reason and "rss" in reason, reason
    # the submission's figure is the run's need (with its headroom), as its verdict judged it
    assert sub["peak_rss_bytes"] == (peak["needs_bytes"] or peak["resident_bytes"]) > 128 * MIB * 0.9, sub
    if "HELD 300 MiB" in text:  # judged over after the fact: the peak says so
        assert peak["resident_bytes"] > 128 * MIB, sub
    else:  # stopped at the limit: the reason says by what
        assert "stopped: rss reached the limit 128 MiB" in reason, reason
        assert peak["resident_bytes"] <= 140 * MIB, sub


def test_over_the_wall_limit_is_stopped_and_fails(sqlite_server: Server) -> None:
    policy = make_policy(sqlite_server, "wall=1s")
    with sqlite_server.client() as c:
        sub = wait_for(c, submit(c, "slow.py", program("sleep"), policy, ["30"])["id"])
        text = output(c, sub["id"])
    assert (sub["status"], sub["verdict"]) == ("done", "fail"), (sub, text)
    assert "stopped: wall time crossed the limit" in sub["reason"], sub["reason"]
    assert 1.0 <= sub["wall_seconds"] < 10, sub
    assert "START" in text and "END" not in text


@pytest.mark.parametrize(
    ("code", "piece"),
    [
        ("import sys\nwhile True:\n    sys.stdout.write('x' * 4096)\n", "output"),
        (
            "import os, time\nfor _ in range(500):\n    if os.fork() == 0:\n        time.sleep(5)\n"
            "        os._exit(0)\n",
            "processes",
        ),
    ],
    ids=["output", "processes"],
)
def test_the_sandboxs_own_limits_make_an_error(sqlite_server: Server, code: str, piece: str) -> None:
    """Not the policy's to judge: over the server's output or process limit is an error, and the
    record says which limit it ran into."""
    policy = make_policy(sqlite_server, "rss=1GiB")
    with sqlite_server.client() as c:
        sub = wait_for(c, submit(c, f"{piece}.py", code.encode(), policy)["id"])
    assert (sub["status"], sub["verdict"]) == ("done", "error"), sub
    assert piece in sub["sandbox"]["hit"], sub["sandbox"]
    assert not alive(processes(sub["id"])), "the run left processes behind"


@pytest.mark.parametrize(
    ("args", "code", "said"), [(["exit", "3"], 3, "CRASHING"), (["raise"], 1, "ValueError")]
)
def test_a_crashing_program_is_an_error_with_its_exit_code(
    server: Server, args: list[str], code: int, said: str
) -> None:
    policy = make_policy(server, "rss=256MiB")
    with server.client() as c:
        sub = wait_for(c, submit(c, "crash.py", program("crash"), policy, args)["id"])
        text = output(c, sub["id"])
    assert (sub["status"], sub["verdict"], sub["exit_code"]) == ("done", "error", code), (sub, text)
    assert f"exit {code}" in sub["reason"], sub["reason"]
    assert said in text


def test_a_run_has_no_network(server: Server) -> None:
    policy = make_policy(server, "rss=256MiB")
    port = server.url.rsplit(":", 1)[1]
    targets = [f"127.0.0.1:{port}", "127.0.0.1:5432", "1.1.1.1:53"]
    with server.client() as c:
        sub = wait_for(c, submit(c, "net.py", program("network"), policy, targets)["id"])
        text = output(c, sub["id"])
    assert (sub["status"], sub["verdict"]) == ("done", "pass"), (sub, text)
    for target in targets:
        assert f"CONNECT {target} FAILED" in text, text
    assert "DNS example.com FAILED" in text and "DNS pypi.org FAILED" in text, text
    assert " OK" not in text, text


def test_a_run_cannot_read_outside_its_directory(server: Server) -> None:
    """Not the server's data directory (its database, a file put there), not another run's upload
    (found through /proc and by searching), not /etc/shadow."""
    policy = make_policy(server, "rss=256MiB wall=60s")
    secret = server.data_dir / "secret.txt"
    secret.write_text("the server's secret\n")
    other_name = f"other_{uuid.uuid4().hex[:8]}.py"
    with server.client() as c:
        other = submit(c, other_name, program("sleep"), policy, ["30"])
        wait_for(c, other["id"], ("running",))
        pid = wait_until("the other run's program", lambda: program_process(other_name))
        try:
            other_dir = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            other_dir = "/nonexistent"
        files = [
            str(server.data_dir / "memgauge.db"),
            str(secret),
            "/etc/shadow",
            os.path.join(other_dir, other_name),
            f"/proc/{pid}/cwd/{other_name}",
            f"/proc/{pid}/root{other_dir}/{other_name}",
            f"/proc/{pid}/environ",
        ]
        args = [*files, str(server.data_dir), "--find", other_name]
        try:
            sub = wait_for(c, submit(c, "escape.py", program("escape"), policy, args)["id"])
            text = output(c, sub["id"])
        finally:
            cancel_all(server, [other["id"]])
    assert (sub["status"], sub["verdict"]) == ("done", "pass"), (sub, text)
    assert "SEARCHED" in text, text
    for path in files:
        assert f"READ {path} FAILED" in text, (path, text)
    # the data directory is unreadable, or an empty stand-in
    listed = [x for x in text.splitlines() if x.startswith(f"LIST {server.data_dir} ")]
    assert not listed or listed == [f"LIST {server.data_dir} OK []"], listed
    assert " OK" not in text.replace(f"LIST {server.data_dir} OK []", ""), text
    assert "the server's secret" not in text
    cwd_line = next(x for x in text.splitlines() if x.startswith("CWD "))
    assert not cwd_line.endswith(" UID 0"), cwd_line


# what the service asks of every run: each must be in the record, applied or not (with why)
EXPECTED_PIECES = ("network", "memory", "wall", "processes", "output", "environment", "user", "filesystem")
_PRIVATE_DIRS = ("/tmp/", "/var/tmp/", "/dev/shm/")


def test_the_sandbox_record_names_every_limit(server: Server) -> None:
    from memgauge.isolation._sandbox import PIECES

    policy = make_policy(server, "rss=256MiB wall=60s")
    with server.client() as c:
        sub = wait_for(c, submit(c, "ok.py", b"print('ok')\n", policy)["id"])
    assert (sub["status"], sub["verdict"]) == ("done", "pass"), sub
    record = sub["sandbox"]
    assert isinstance(record, dict), sub
    applied, not_applied = record.get("applied"), record.get("not_applied")
    assert isinstance(applied, dict) and isinstance(not_applied, dict), record
    assert not set(applied) & set(not_applied), record
    assert set(applied) | set(not_applied) == set(PIECES) >= set(EXPECTED_PIECES), record
    for name, why in not_applied.items():
        assert isinstance(why, str) and why.strip(), f"{name} not applied, without a reason: {record}"
    for name, how in applied.items():
        assert isinstance(how, str) and how.strip(), f"{name} applied, but how is not said: {record}"
    # the policy's limit is the one enforced (below the server's --max-memory)
    if "memory" in applied:
        assert "256 MiB" in applied["memory"], applied["memory"]
    data_dir = os.path.realpath(server.data_dir)
    if "filesystem" in applied and not (data_dir + "/").startswith(_PRIVATE_DIRS):
        assert data_dir in applied["filesystem"], applied["filesystem"]


# == profile, report, cancel =======================================================================


def test_profile_and_report_once_finished_and_cancel(server: Server) -> None:
    policy = make_policy(server, "rss=256MiB wall=120s")
    with server.client() as c:
        # both workers busy, so the third waits in the queue
        first = submit(c, "long1.py", program("sleep"), policy, ["60"])
        second = submit(c, "long2.py", program("sleep"), policy, ["60"])
        wait_for(c, first["id"], ("running",))
        wait_for(c, second["id"], ("running",))
        queued = submit(c, "queued.py", b"print('never')\n", policy)
        try:
            for sub_id in (first["id"], queued["id"]):
                for path in ("profile", "report", "verdict"):
                    r = c.get(f"{API}/submissions/{sub_id}/{path}")
                    assert r.status_code == 409, (path, r.text)
                    assert "has no" in detail(r)
            assert get(c, queued["id"])["status"] == "queued"
            r = c.post(f"{API}/submissions/{queued['id']}/cancel")
            assert r.status_code == 200 and r.json()["status"] == "cancelled", r.text
            assert "before it ran" in r.json()["reason"]
            r = c.post(f"{API}/submissions/{queued['id']}/cancel")
            assert r.status_code == 409 and "has finished" in detail(r)
            started = time.monotonic()
            r = c.post(f"{API}/submissions/{first['id']}/cancel")
            assert r.status_code == 200, r.text
            stopped = wait_for(c, first["id"], timeout=30)
            assert stopped["status"] == "cancelled", stopped
            assert "while it ran" in stopped["reason"]
            assert time.monotonic() - started < 20
            assert not alive(processes(first["id"])), "the cancelled run is still there"
        finally:
            cancel_all(server, [first["id"], second["id"], queued["id"]])
        sub = wait_for(c, submit(c, "hold.py", program("hold"), policy, ["20", "0"])["id"])
        assert sub["verdict"] == "pass", sub
        profile = c.get(f"{API}/submissions/{sub['id']}/profile")
        assert profile.status_code == 200 and profile.headers["content-type"] == "application/json"
        doc = profile.json()
        assert doc["peak"]["needs_bytes"] == sub["peak_rss_bytes"] >= 20 * MIB
        report = c.get(f"{API}/submissions/{sub['id']}/report")
        assert report.status_code == 200 and report.headers["content-type"].startswith("text/html")
        assert report.text.lstrip().lower().startswith("<!doctype html") and "hold.py" in report.text


# == memgauge submit ===============================================================================


def memgauge_submit(args: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MEMGAUGE_TOKEN", "MEMGAUGE_SERVER")}
    return subprocess.run(
        [sys.executable, "-m", "memgauge", "submit", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


def test_submit_cli_refusals(sqlite_server: Server, tmp_path: Path) -> None:
    server = sqlite_server
    policy = make_policy(server, "rss=256MiB")
    script = tmp_path / "ok.py"
    script.write_bytes(b"print('ok')\n")
    bad_token = memgauge_submit(
        [str(script), "--policy", policy, "--server", server.url, "--token", "mg_" + "x" * 43]
    )
    assert bad_token.returncode == 77, bad_token
    assert "refused the token" in bad_token.stderr
    nowhere = f"http://127.0.0.1:{free_port()}"
    unreachable = memgauge_submit(
        [str(script), "--policy", policy, "--server", nowhere, "--token", server.admin]
    )
    assert unreachable.returncode == 69, unreachable
    assert "cannot reach" in unreachable.stderr
    before = total(server)
    archive = tmp_path / "bad.zip"
    archive.write_bytes(zip_bytes({"main.py": _MAIN, "../up.py": _MAIN}))
    refused = memgauge_submit(
        [str(archive), "--policy", policy, "--server", server.url, "--token", server.admin]
    )
    assert refused.returncode == 65, refused
    assert "refused it" in refused.stderr and "'..'" in refused.stderr
    no_policy = memgauge_submit(
        [str(script), "--policy", "nope", "--server", server.url, "--token", server.admin]
    )
    assert no_policy.returncode == 65, no_policy
    assert "no policy 'nope'" in no_policy.stderr
    assert total(server) == before


@pytest.mark.slow
def test_submit_cli_exits_with_the_verdict(sqlite_server: Server, tmp_path: Path) -> None:
    server = sqlite_server
    policy = make_policy(server, "rss=128MiB")
    _, token = make_token(server)
    hold, crash = tmp_path / "hold.py", tmp_path / "crash.py"
    hold.write_bytes(program("hold"))
    crash.write_bytes(program("crash"))
    common = ["--policy", policy, "--server", server.url, "--token", token]
    record, report = tmp_path / "record.json", tmp_path / "report.html"
    ok = memgauge_submit([str(hold), *common, "--json", str(record), "--html", str(report), "--", "20", "0"])
    assert ok.returncode == 0, ok
    assert "submitted " in ok.stderr and "PASS:" in ok.stderr, ok.stderr
    assert "done after" in ok.stderr  # progress, a line per change (stderr is not a terminal)
    saved = json.loads(record.read_text())
    assert (saved["status"], saved["verdict"], saved["args"]) == ("done", "pass", ["20", "0"])
    assert saved["id"] in ok.stderr
    assert report.read_text().lstrip().lower().startswith("<!doctype html")
    over = memgauge_submit([str(hold), *common, "--", "300", "0"])
    assert over.returncode == 1, over
    assert "FAIL:" in over.stderr
    crashed = memgauge_submit([str(crash), *common, "--", "exit", "3"])
    assert crashed.returncode == 2, crashed
    assert "ERROR:" in crashed.stderr
    queued = memgauge_submit([str(hold), *common, "--no-wait", "--", "1", "0"])
    assert queued.returncode == 0 and len(queued.stdout.strip()) == 32, queued
    with server.client() as c:
        wait_for(c, queued.stdout.strip())


# == restarts, crashes, lost workers ===============================================================


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_stopped_server_resumes_its_queue(tmp_path: Path, backend: str) -> None:
    """SIGTERM while a run goes on: it goes back to the queue uncharged (the dispatcher's rule), and
    after a restart all five finish."""
    with serving(tmp_path, backend, ["--workers", "1"]) as server:
        policy = make_policy(server, "rss=256MiB wall=60s")
        with server.client() as c:
            ids = [submit(c, f"sleep{i}.py", program("sleep"), policy, ["2"])["id"] for i in range(5)]
            running = wait_for(c, ids[0], ("running",))
            run_process(ids[0])
            assert total(server, status="running") == 1
        server.stop(signal.SIGTERM)
        assert not alive(processes(ids[0])), "the stopped server left its run behind"
        interrupted = db_submission(server, ids[0])
        assert interrupted is not None
        assert (interrupted["status"], interrupted["attempts"]) == ("queued", 0), interrupted
        assert "the server stopped" in interrupted["reason"]
        assert [db_submission(server, i)["status"] for i in ids[1:]] == ["queued"] * 4  # type: ignore[index]
        again = restarted(server)
        try:
            with again.client() as c:
                finished = [wait_for(c, i, timeout=60) for i in ids]
        finally:
            again.stop()
    assert [(s["status"], s["verdict"]) for s in finished] == [("done", "pass")] * 5, finished
    assert [s["attempts"] for s in finished] == [1] * 5
    # it ran again, from the start
    assert dt.datetime.fromisoformat(finished[0]["started_at"]) > dt.datetime.fromisoformat(
        running["started_at"]
    )


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_crashed_server_requeues_its_run_and_kills_its_orphans(tmp_path: Path, backend: str) -> None:
    """SIGKILL of the server process only: its run is left behind; the next server kills it,
    re-queues the submission (charged) and runs it again."""
    with serving(tmp_path, backend, ["--workers", "1"]) as server:
        policy = make_policy(server, "rss=256MiB wall=60s")
        name = f"crashed_{uuid.uuid4().hex[:8]}.py"
        with server.client() as c:
            sub = submit(c, name, program("sleep"), policy, ["6"])
            after = submit(c, "after.py", b"print('after')\n", policy)
            wait_for(c, sub["id"], ("running",))
            wait_until("the program", lambda: program_process(name))
        assert server.proc is not None
        run_dirs = set(Path(tempfile.gettempdir()).glob(f"{RUN_PREFIX}{server.proc.pid}-*"))
        assert run_dirs, "the run's directory is not where the sandbox puts it"
        server.stop(signal.SIGKILL)
        left = {**processes(sub["id"]), **processes(contains=name)}
        assert left, "nothing of the run outlived the server: nothing to test"
        assert db_submission(server, sub["id"])["status"] == "running"  # type: ignore[index]
        again = restarted(server)
        try:
            # the old run would sleep on for seconds yet: it is the new server that ends it
            wait_until("the old run's processes to be gone", lambda: not alive(left), timeout=2)
            with again.client() as c:
                finished = wait_for(c, sub["id"], timeout=60)
                text = output(c, sub["id"])
                assert wait_for(c, after["id"])["verdict"] == "pass"
        finally:
            again.stop()
    assert (finished["status"], finished["verdict"], finished["attempts"]) == ("done", "pass", 2), finished
    assert "START" in text and "END" in text
    assert not {d for d in run_dirs if d.exists()}, "the dead server's run directory was left behind"


@pytest.mark.slow
def test_a_killed_worker_is_requeued_and_runs_again(server: Server) -> None:
    policy = make_policy(server, "rss=256MiB wall=60s")
    name = f"victim_{uuid.uuid4().hex[:8]}.py"
    with server.client() as c:
        sub = submit(c, name, program("sleep"), policy, ["6"])
        wait_for(c, sub["id"], ("running",))
        pid = run_process(sub["id"])
        wait_until("the program", lambda: program_process(name))
        first = {**processes(sub["id"]), **processes(contains=name)}
        os.kill(pid, signal.SIGKILL)
        wait_until("the second attempt", lambda: get(c, sub["id"])["attempts"] == 2, timeout=30)
        # what is left of the first attempt (its program sleeps on for seconds) goes with it
        left = set(first) - {pid}
        assert left, f"no process of the first attempt but memgauge run: {first}"
        try:
            wait_until("the killed run's processes to go", lambda: not alive(left), timeout=3)
        except AssertionError:
            raise AssertionError(f"the killed run's processes were left running: {first}") from None
        finished = wait_for(c, sub["id"], timeout=60)
        text = output(c, sub["id"])
    assert (finished["status"], finished["verdict"], finished["attempts"]) == ("done", "pass", 2), finished
    assert "START" in text and "END" in text


# == many at once ==================================================================================


@pytest.mark.slow
def test_fifty_concurrent_submissions(server: Server) -> None:
    policy = make_policy(server, "rss=256MiB wall=60s")
    _, token = make_token(server)
    ids: list[str | None] = [None] * 50
    errors: list[str] = []

    def one(i: int) -> None:
        try:
            with server.client(token) as c:
                r = post(c, f"c{i}.py", f"print('job {i}')\n".encode(), policy)
            if r.status_code == 201:
                ids[i] = r.json()["id"]
            else:
                errors.append(f"{r.status_code} {r.text}")
        except Exception as e:
            errors.append(repr(e))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(50)]
    most_running = 0
    for t in threads:
        t.start()
    with server.client() as c:
        for t in threads:
            t.join(60)
        assert not errors, errors
        assert all(ids) and len(set(ids)) == 50
        deadline = time.monotonic() + 180
        while True:
            running = c.get(f"{API}/submissions", params={"status": "running", "limit": 10}).json()["total"]
            most_running = max(most_running, running)
            assert running <= 2, f"{running} running at once with --workers 2"
            in_flight = httpx.get(server.url + "/healthz").json()["in_flight"]
            assert in_flight <= 2
            left = c.get(f"{API}/submissions", params={"policy": policy, "status": "queued"}).json()["total"]
            if left == 0 and running == 0:
                break
            assert time.monotonic() < deadline, "the fifty did not finish in time"
            time.sleep(0.05)
        finished = [get(c, str(sub_id)) for sub_id in ids]
    assert most_running >= 1
    assert [(s["status"], s["verdict"]) for s in finished] == [("done", "pass")] * 50
    assert {s["attempts"] for s in finished} == {1}


@pytest.mark.slow
def test_two_servers_share_one_postgresql_queue(tmp_path: Path) -> None:
    """What PostgreSQL is for: two servers on one database run every submission once between them."""
    with serving(tmp_path / "one", "postgres", ["--workers", "2"]) as one:
        (tmp_path / "two").mkdir()
        two = Server(tmp_path / "two" / "data", one.db, one.admin, extra=["--workers", "2"]).start()
        try:
            policy = make_policy(one, "rss=256MiB wall=60s")
            with one.client() as c1, two.client() as c2:
                clients = (c1, c2)
                ids = [
                    submit(clients[i % 2], f"s{i}.py", program("sleep"), policy, ["0.5"])["id"]
                    for i in range(16)
                ]
                finished = [wait_for(clients[(i + 1) % 2], sub_id) for i, sub_id in enumerate(ids)]
                texts = [output(c1, sub_id) for sub_id in ids]
            workers = {row[0] for row in db_query(one, "SELECT worker FROM submissions")}
        finally:
            two.stop()
    assert [(s["status"], s["verdict"], s["attempts"]) for s in finished] == [("done", "pass", 1)] * 16
    assert [t.count("START") for t in texts] == [1] * 16
    pids = {w.split(":")[1] for w in workers}
    assert pids == {str(one.proc.pid), str(two.proc.pid)}, workers  # type: ignore[union-attr]
