"""Regression tests from an adversarial review of the validation service: real sandboxed runs
(``execute_job``), real ``memgauge serve`` processes and real HTTP, as in ``test_sandbox.py`` and
``test_service_e2e.py``. Each test failed before its fix."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memgauge.isolation import MAX_PROFILE_BYTES, Sandbox, Upload
from memgauge.isolation._probes import unshare_problem
from memgauge.sweep import Job, JobResult, execute_job
from tests.conftest import MIB
from tests.service_server import Server, admin_token, make_policy, postgres_database

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox is Linux-only")

ROOT = sys.platform == "linux" and os.geteuid() == 0
NAMESPACE_PROBLEM = unshare_problem(("--net", "--mount")) if sys.platform == "linux" else "not Linux"
needs_sandbox = pytest.mark.skipif(
    not ROOT or bool(NAMESPACE_PROBLEM), reason=f"needs root and namespaces ({NAMESPACE_PROBLEM})"
)
API = "/api/v1"
FINISHED = ("done", "failed", "cancelled")

# a program that plants a line-sampler file of its own naming files it may not read, then dies
# before its own sampler can overwrite it: the runner (root) must not read them for it. The file
# is a well-formed record of the wire format (capture/_wire.py, version 1), or the reader would
# drop it unread and the test would prove nothing
FAKE_LINES = """
import json, os, signal, sys
d = os.environ["MEMGAUGE_EVENTS_DIR"]
pid = os.getpid()
keys = [[t, 1, "f"] for t in sys.argv[1:]] + [[os.path.abspath(__file__), 2, "own"]]
data = {"v": 1, "pid": pid, "t_start": 0.0, "t_end": 0.0, "interval": 0.01, "lib": False,
        "keys": keys, "stacks": {str(i): [i] for i in range(len(keys))},
        "lines": [[i, 1.0, 0.0, 0.0, 0, 1] for i in range(len(keys))],
        "peak": {"rss": 1, "t": 0.0, "retained": [[i, 100] for i in range(len(keys))]},
        "retained": [], "series": [], "imports": []}
with open(os.path.join(d, f"lines.{pid}.json"), "w") as f:
    json.dump(data, f)
os.kill(pid, signal.SIGKILL)
"""


def sandboxed(code: str, *args: str, **limits: Any) -> JobResult:
    limits.setdefault("memory_bytes", 512 * MIB)
    limits.setdefault("wall_seconds", 60)
    job = Job(
        f"review-{uuid.uuid4().hex[:6]}",
        ("main.py", *args),
        sandbox=Sandbox(**limits),
        upload=Upload("main.py", code.encode()),
    )
    return execute_job(job)


# -- the sandbox ------------------------------------------------------------------------------------


@needs_sandbox
def test_the_runner_reads_no_source_line_the_program_could_not_read() -> None:
    """Line attribution shows each line's source; the runner (root) read it from whatever file the
    program's line samples named: /etc/shadow, another process's environment (the server's, with
    its tokens) came back in the profile."""
    secret = f"review-secret-{uuid.uuid4().hex}"
    # a root-only file outside every directory the sandbox covers
    base = next((d for d in ("/var/lib", "/srv", "/opt") if os.access(d, os.W_OK)), None)
    fd, path = tempfile.mkstemp(prefix="memgauge-review-", dir=base)
    os.write(fd, f"{secret}\n".encode())
    os.close(fd)
    os.chmod(path, 0o600)
    # a root process with the secret in its environment, as a server's admin token is
    holder = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], env={**os.environ, "REVIEW_SECRET": secret}
    )
    try:
        result = sandboxed(FAKE_LINES, "/etc/shadow", f"/proc/{holder.pid}/environ", path)
    finally:
        holder.kill()
        holder.wait()
        os.unlink(path)
    assert result.profile is not None, result.error
    assert result.profile.get("warnings", []) == [], result.profile["warnings"]
    text = json.dumps(result.profile)
    assert "/etc/shadow" in text  # the lines are there, faked as they may be ...
    assert secret not in text  # ... but not what they name
    assert "import json, os, signal, sys" in text  # the program's own source lines still are
    shadow = Path("/etc/shadow").read_text().splitlines()[:1] if os.path.exists("/etc/shadow") else []
    for line in shadow:
        assert line.strip() not in text


@needs_sandbox
def test_a_program_cannot_make_an_enormous_profile() -> None:
    """Every event of the program's becomes part of the profile (a process record per unknown pid,
    its command line as given); events files were bounded one by one, not in total. 24 MiB of
    events made a profile of as much, which the server stored and renders on every report
    request (and a program may write any number of such files)."""
    code = """
import os, time
d = os.environ["MEMGAUGE_EVENTS_DIR"]
t = time.monotonic()
arg = "x" * 100_000
for n in range(3):
    with open(os.path.join(d, f"events.{n}.jsonl"), "w") as f:
        for i in range(80):
            ev = '{"ev":"exit","pid":%d,"t":%f,"hwm":1000,"cmdline":["%s"]}'
            f.write(ev % (10**7 + n * 1000 + i, t, arg) + "\\n")
"""
    result = sandboxed(code)
    size = len(json.dumps(result.profile)) if result.profile is not None else 0
    assert size <= MAX_PROFILE_BYTES, f"a profile of {size >> 20} MiB"
    assert result.error is None or "profile" in result.error or "measurement" in result.error, result.error
    assert result.sandbox is not None and "filesystem" in result.sandbox["hit"], result.sandbox


def _sysv_keys() -> set[int]:
    keys = set()
    for table in ("shm", "msg", "sem"):
        try:
            with open(f"/proc/sysvipc/{table}") as f:
                next(f)
                keys |= {int(line.split()[0]) for line in f if line.strip()}
        except OSError:
            continue
    return keys


@needs_sandbox
def test_a_run_leaves_no_system_v_ipc_behind() -> None:
    """The run had its own network and mount namespaces, not its own IPC namespace: a System V
    shared memory segment (or message queue) it made outlived it, holding memory no cgroup of the
    run's accounts for any more, and open to the next run (or any process on the host)."""
    key = 0x5EED0000 + os.getpid() % 0xFFFF
    code = f"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
shm = libc.shmget({key}, 1 << 20, 0o1666)   # IPC_CREAT | 0666
msg = libc.msgget({key}, 0o1666)
print(shm, msg)
"""
    before = _sysv_keys()
    result = sandboxed(code)
    assert result.profile is not None and result.profile["exit"]["code"] == 0, result.output_tail
    left = _sysv_keys() - before
    if key in left:
        for option in ("-M", "-Q"):
            subprocess.run(["ipcrm", option, str(key)], check=False, capture_output=True)
    assert key not in left, f"a System V IPC object of the run's is still there: {result.output_tail}"


# -- servers ----------------------------------------------------------------------------------------


def _data_base() -> Path | None:
    """Outside /tmp (every run's /tmp is private, which would hide a data directory there)."""
    for base in ("/var/lib", "/srv", "/opt"):
        if os.path.isdir(base) and os.access(base, os.W_OK):
            return Path(base)
    return None


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    import shutil

    base = _data_base()
    path = (
        Path(tempfile.mkdtemp(prefix="memgauge-review-", dir=base))
        if base
        else tmp_path_factory.mktemp("srv")
    )
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def pg_server(scratch: Path) -> Iterator[Server]:
    with postgres_database() as url:
        server = Server(scratch / "pg-data", url, admin_token(), extra=["--workers", "2"]).start()
        try:
            yield server
        finally:
            server.stop()


def submit(client: Any, code: str, policy: str, args: list[str] | None = None) -> dict[str, Any]:
    r = client.post(
        f"{API}/submissions",
        data={"policy": policy, "args": json.dumps(args or [])},
        files={"file": ("main.py", code.encode())},
    )
    assert r.status_code == 201, r.text
    sub: dict[str, Any] = r.json()
    return sub


def wait_for(
    client: Any, sub_id: str, statuses: tuple[str, ...] = FINISHED, timeout: float = 30.0
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        r = client.get(f"{API}/submissions/{sub_id}")
        assert r.status_code == 200, r.text
        sub: dict[str, Any] = r.json()
        if sub["status"] in statuses:
            return sub
        if time.monotonic() > deadline:
            raise AssertionError(f"submission {sub_id} is still {sub['status']} after {timeout} s: {sub}")
        time.sleep(0.1)


# -- the dispatcher ---------------------------------------------------------------------------------


@needs_sandbox
def test_a_result_the_database_refuses_does_not_leave_the_submission_running(pg_server: Server) -> None:
    """PostgreSQL refuses a NUL in text: a program printing one made storing its result raise in
    the dispatcher, which had already forgotten the run. The submission stayed ``running`` for
    good (its own server never recovers its own runs), and the server went on without it."""
    server = pg_server
    policy = make_policy(server, "rss=256MiB")
    with server.client() as c:
        sub = submit(c, "import sys; sys.stdout.write('before\\x00after\\n')\n", policy)
        done = wait_for(c, sub["id"])
        assert done["status"] in ("done", "failed"), done
        assert done["verdict"] is not None, done
        # and the server still runs the next one
        after = wait_for(c, submit(c, "print('next')\n", policy)["id"])
        assert (after["status"], after["verdict"]) == ("done", "pass"), after


# -- memgauge submit --------------------------------------------------------------------------------


class _NotTheService(http.server.BaseHTTPRequestHandler):
    """A web server that is not the service (a proxy's login page, a wrong port): 200 and HTML."""

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        body = b"<!doctype html><title>Sign in</title>"
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer  # noqa: N815

    def log_message(self, *args: Any) -> None:
        pass


@pytest.mark.parametrize("body", ["html", "list"])
def test_submit_exits_69_when_the_server_answers_garbage(tmp_path: Path, body: str) -> None:
    """docs/service.md: 69, the server cannot be reached or failed. A 200 that is not the API's
    JSON crashed ``memgauge submit`` into exit 70 (internal error), which CI reads as memgauge's bug."""
    handler = _NotTheService
    if body == "list":

        class _List(_NotTheService):
            def _answer(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                data = b"[1, 2]"
                self.send_response(201)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer  # noqa: N815

        handler = _List
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        prog = tmp_path / "p.py"
        prog.write_text("print(1)\n")
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "memgauge",
                "submit",
                str(prog),
                "--policy",
                "x",
                "--server",
                url,
                "--token",
                "mg_" + "a" * 40,
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert done.returncode == 69, (done.returncode, done.stderr)
    assert "internal error" not in done.stderr


# -- the queue --------------------------------------------------------------------------------------


def test_cancelling_a_queued_submission_as_it_is_claimed_does_not_lose_the_claim(tmp_path: Path) -> None:
    """The cancel of a queued submission read its status, then wrote ``cancelled`` whatever the
    status had become: when a dispatcher claimed it in between, the claim was overwritten. The
    run went on (nothing asked its worker to stop it) while the submission said ``cancelled``."""
    from sqlalchemy import event

    from memgauge.service import _store as store
    from memgauge.service._db import database_url, open_database

    with postgres_database() as url:
        db = open_database(database_url(url, str(tmp_path)))
        try:
            owner, _ = store.create_token(db, "t", "submitter")
            new = store.NewSubmission(
                owner.id, "p", "rss=1GiB", "main.py", "py", "main.py", [], b"print(1)\n"
            )
            sub = store.add_submission(db, new)
            claimed: list[Any] = []

            def claim_first(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
                # the dispatcher claims it between the cancel's read and its write
                if statement.lstrip().upper().startswith("UPDATE SUBMISSIONS") and not claimed:
                    claimed.append(None)
                    claimed.extend(store.claim_queued(db, "worker-a", 1))

            event.listen(db.engine, "before_cursor_execute", claim_first)
            try:
                store.request_cancel(db, sub.id)
            finally:
                event.remove(db.engine, "before_cursor_execute", claim_first)
            after = store.get_submission(db, sub.id)
            assert after is not None
            if len(claimed) > 1:  # the claim won: the run must be asked to stop, not overwritten
                assert (after.status, after.worker, after.cancel_requested) == ("running", "worker-a", True)
            else:
                assert after.status == "cancelled"
        finally:
            db.close()
