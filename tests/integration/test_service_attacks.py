"""The validation service under attack (issue 17), each attack through real HTTP against a real
``memgauge serve`` on 127.0.0.1, with the bounded outcome asserted: an unauthenticated 1 GiB body
streamed without Content-Length (server memory and disk), a command-line flood (the runner's own
memory), a 2 GiB writer (a disk budget), a daemon that outlives a killed server, user namespaces and
other runs' cgroups from inside, quotas, policies that cannot fail, and the CLI's rough edges.

Bodies are generated as they are sent, never held: a 1 GiB body costs this process 64 KiB.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from tests.service_server import Server, admin_token, make_policy, make_token

API = "/api/v1"
MIB = 1 << 20
GIB = 1 << 30
FINISHED = ("done", "failed", "cancelled")
SANDBOX_UIDS = range(200_000, 300_000)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("attacks")
    s = Server(base / "data", None, admin_token()).start()
    try:
        yield s
    finally:
        s.stop()


def submit(server: Server, code: str, policy: str, token: str | None = None) -> dict[str, Any]:
    with server.client(token) as c:
        r = c.post(f"{API}/submissions", data={"policy": policy}, files={"file": ("job.py", code.encode())})
    assert r.status_code == 201, r.text
    sub: dict[str, Any] = r.json()
    return sub


def wait_for(server: Server, sub_id: str, statuses: tuple[str, ...] = FINISHED, timeout: float = 120) -> Any:
    deadline = time.monotonic() + timeout
    with server.client() as c:
        while True:
            sub = c.get(f"{API}/submissions/{sub_id}").json()
            if sub["status"] in statuses:
                return sub
            assert time.monotonic() < deadline, f"still {sub['status']} after {timeout} s: {sub}"
            time.sleep(0.2)


# -- the server's memory and disk under an unauthenticated (or oversized) streamed body -------------


def _status(pid: int) -> dict[str, int]:
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1]) * 1024
    return out


def _open_file_bytes(pid: int) -> int:
    """Bytes in the regular files the server holds open (a spooled upload is an unlinked temporary
    file: only its descriptor shows it), the database excluded."""
    total = 0
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return 0
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("/") and not target.startswith(("/dev", "/proc", "/sys")):
                if ".sqlite" in target or target.endswith(("-wal", "-shm", ".db")):
                    continue
                total += os.stat(f"/proc/{pid}/fd/{fd}").st_size
        except OSError:
            continue
    return total


class DiskWatch:
    """The most the server's open files held while it ran (sampled every 10 ms)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _open_file_bytes(self.pid))
            time.sleep(0.01)

    def __enter__(self) -> DiskWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def stream(
    server: Server, path: str, *, token: str | None, content_type: str, head: bytes = b"", total: int = GIB
) -> tuple[int, int, bytes]:
    """POST ``total`` bytes to ``path`` as a chunked body (no Content-Length), generated as it goes,
    until the server answers (or closes). Returns the status, the bytes sent and the answer."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Transfer-Encoding: chunked"]
    lines.append(f"Content-Type: {content_type}")
    if token:
        lines.append(f"Authorization: Bearer {token}")
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    chunk = b"7" * (64 << 10)
    sent, answer = 0, b""
    deadline = time.monotonic() + 120
    try:
        if head:
            sock.sendall(b"%x\r\n%s\r\n" % (len(head), head))
            sent += len(head)
        while sent < total and time.monotonic() < deadline:
            readable, writable, _ = select.select([sock], [sock], [], 10)
            if readable:
                break
            if writable:
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += len(chunk)
        else:
            sock.sendall(b"0\r\n\r\n")
    except OSError:
        pass  # the server closed the connection: its answer is in the socket
    sock.settimeout(30)
    try:
        while b"\r\n\r\n" not in answer:
            part = sock.recv(65536)
            if not part:
                break
            answer += part
        answer += sock.recv(65536) if b"\r\n\r\n" in answer else b""
    except OSError:
        pass
    sock.close()
    status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0
    return status, sent, answer


TOKENS, UPLOAD = f"{API}/tokens", f"{API}/submissions"
JSON, MULTIPART = "application/json", "multipart/form-data; boundary=BOUNDARY"
MULTIPART_HEAD = (
    b'--BOUNDARY\r\nContent-Disposition: form-data; name="policy"\r\n\r\nany\r\n'
    b'--BOUNDARY\r\nContent-Disposition: form-data; name="file"; filename="big.py"\r\n'
    b"Content-Type: application/octet-stream\r\n\r\n"
)


@pytest.mark.parametrize(
    ("case", "path", "content_type", "head", "who", "status"),
    [
        ("tokens, no token", TOKENS, JSON, b'{"name": "', None, 401),
        ("upload, no token", UPLOAD, MULTIPART, MULTIPART_HEAD, None, 401),
        ("upload, a bad token", UPLOAD, MULTIPART, MULTIPART_HEAD, "mg_" + "x" * 43, 401),
        ("upload, a submitter", UPLOAD, MULTIPART, MULTIPART_HEAD, "submitter", 413),
        ("tokens, a submitter", TOKENS, JSON, b'{"name": "', "submitter", 413),
        ("login form", "/login", "application/x-www-form-urlencoded", b"token=", None, 413),
    ],
)  # fmt: skip
def test_a_streamed_1gib_body_is_refused_with_bounded_memory_and_disk(
    server: Server, case: str, path: str, content_type: str, head: bytes, who: str | None, status: int
) -> None:
    """Issue 17, findings 1 and 2: a 1 GiB body without Content-Length. Without a valid token the
    server answers 401 from the headers, reading nothing; with one it stops reading at the route's
    limit (16 MiB + 1 MiB of multipart envelope for an upload, 64 KiB for anything else) with 413.
    Server RSS grows by under 50 MiB, its files on disk stay under the upload limit."""
    token = make_token(server)[1] if who == "submitter" else who
    assert server.proc is not None
    pid = server.proc.pid
    before = _status(pid)["VmRSS"]
    with DiskWatch(pid) as disk:
        got, sent, answer = stream(server, path, token=token, content_type=content_type, head=head)
    grown = _status(pid)["VmHWM"] - before  # the high-water mark: an upper bound of the growth
    assert got == status, (case, answer[:500])
    assert b'"detail"' in answer and b"connection: close" in answer.lower()
    assert grown < 50 * MIB, f"{case}: server RSS grew {grown / MIB:.1f} MiB"
    assert disk.peak < 17 * MIB, f"{case}: the server held {disk.peak / MIB:.1f} MiB on disk"
    # the server stopped reading; what was sent is what the kernel's buffers took meanwhile
    assert sent < 64 * MIB, f"{case}: {sent / MIB:.0f} MiB sent before the answer"
    with server.client() as c:
        assert c.get("/healthz").status_code == 200


# -- the runner's own memory under a command-line flood ----------------------------------------------

FLOOD = """
import subprocess
big = ["x" * 131000] * 8  # about 1 MiB of command line per child
for batch in range(16):  # 25 at once: each is a shell and its sleep, under the 64 tasks of a run
    children = [subprocess.Popen(["/bin/sh", "-c", "sleep 0.3; true", *big]) for _ in range(25)]
    for child in children:
        child.wait()
print("FLOODED")
"""
RUNNER_CAP = 150 * MIB


def test_a_command_line_flood_keeps_the_runner_under_its_cap(server: Server) -> None:
    """Issue 17, finding 3: 400 children with ~1 MiB command lines each (the runner kept every one
    whole: 1.13 GiB, and a profile over 16 MiB). The watcher keeps 4 KiB of one, 1 MiB of all; the
    runner's own peak (its VmHWM, in the sandbox record) stays under 150 MiB, and the run passes."""
    policy = make_policy(server, "rss=200MiB wall=60s")
    sub = wait_for(server, submit(server, FLOOD, policy)["id"])
    runner = (sub.get("sandbox") or {}).get("runner") or {}
    assert sub["verdict"] == "pass", sub
    assert 0 < runner["peak_rss_bytes"] < RUNNER_CAP, runner
    with server.client() as c:
        profile = c.get(f"{API}/submissions/{sub['id']}/profile")
    assert len(profile.content) < 4 * MIB
    cmdlines = [p["cmdline"] for p in profile.json().get("processes", [])]
    assert cmdlines and max(sum(len(a) for a in c) for c in cmdlines) < 4200


# -- disk ----------------------------------------------------------------------------------------------

WRITER = """
import os
written = 0
for name in ("a.bin", "b.bin", os.path.join(os.environ["TMPDIR"], "c.bin")):
    try:
        with open(name, "wb") as f:
            for _ in range(700):
                f.write(b"\\1" * (1 << 20))
                written += 1 << 20
    except OSError as e:
        print("STOPPED", e.strerror, written >> 20, "MiB")
        break
print("WROTE", written >> 20, "MiB")
"""


def test_a_disk_budget_fails_a_2gib_writer(server: Server) -> None:
    """Issue 17, finding 4: 2 GiB written as three files. The run's scratch space holds the policy's
    disk limit (a tmpfs of that size over every writable place); the writes past it fail, the
    verdict is fail on disk, and the bytes written are reported."""
    policy = make_policy(server, "rss=1GiB disk=100MiB wall=60s")
    sub = wait_for(server, submit(server, WRITER, policy)["id"])
    assert sub["verdict"] == "fail", sub
    disk = sub["sandbox"]["disk"]
    assert disk["limit_bytes"] == 100 * MIB and 100 * MIB < disk["peak_bytes"] <= 101 * MIB, disk
    assert "disk" in sub["sandbox"]["applied"] and "disk" in sub["sandbox"]["hit"]
    with server.client() as c:
        out = c.get(f"{API}/submissions/{sub['id']}/output").text
        verdict = c.get(f"{API}/submissions/{sub['id']}/verdict").json()
    assert "STOPPED" in out and "No space left" in out
    [result] = [r for r in verdict["results"] if r["metric"] == "disk"]
    assert result["status"] == "fail" and result["measured"] > 100 * MIB


def test_within_a_disk_budget_passes_and_reports_what_it_wrote(server: Server) -> None:
    code = "open('out.bin', 'wb').write(b'1' * (20 << 20)); print('OK')"
    policy = make_policy(server, "rss=256MiB disk=64MiB")
    sub = wait_for(server, submit(server, code, policy)["id"])
    assert sub["verdict"] == "pass", sub
    assert 20 * MIB <= sub["sandbox"]["disk"]["peak_bytes"] < 22 * MIB


# -- inside the sandbox: user namespaces, other runs' cgroups ---------------------------------------

PROBE = """
import ctypes, glob, os, subprocess
libc = ctypes.CDLL(None, use_errno=True)
rc = libc.unshare(0x10000000)
print("UNSHARE", rc, os.strerror(ctypes.get_errno()) if rc else "made")
done = subprocess.run(["unshare", "--user", "true"], capture_output=True, text=True)
print("UNSHARE-CMD", done.returncode)
own = {line.strip().rsplit("/", 1)[-1] for line in open("/proc/self/cgroup")}
others, readable = set(), []
for group in glob.glob("/sys/fs/cgroup/**/memgauge-*", recursive=True):
    # another sandboxed run's (its group is its gid's): the blocker's, at least
    if os.path.basename(group) in own or not 200000 <= os.stat(group).st_gid < 300000:
        continue
    others.add(group)
    for name in ("memory.usage_in_bytes", "memory.current", "memory.stat", "pids.current"):
        try:
            open(os.path.join(group, name)).read()
            readable.append(name)
        except OSError:
            pass
print("OTHER-RUNS", len(others), "CGROUP-READABLE", len(readable))
"""


def test_no_user_namespaces_and_no_cgroup_figures_inside(tmp_path: Path) -> None:
    """Issue 17, finding 5: a new user namespace is refused (EPERM), by the call and by the
    unshare command; no other run's memgauge cgroup can be read (a run reads only its own)."""
    server = Server(tmp_path / "data", None, admin_token(), extra=["--workers", "2"]).start()
    try:
        policy = make_policy(server, "rss=256MiB wall=30s")
        blocker = submit(server, "import time; time.sleep(5)", policy)  # another run, running meanwhile
        wait_for(server, blocker["id"], ("running",))
        sub = wait_for(server, submit(server, PROBE, policy)["id"])
        wait_for(server, blocker["id"])
        with server.client() as c:
            out = c.get(f"{API}/submissions/{sub['id']}/output").text
    finally:
        server.stop()
    assert "UNSHARE -1 Operation not permitted" in out, out
    assert "UNSHARE-CMD 0" not in out and "CGROUP-READABLE 0" in out and "OTHER-RUNS 0 " not in out, out
    assert "no new user namespaces" in sub["sandbox"]["applied"]["user"]


# -- a daemon that outlives a killed server --------------------------------------------------------

DAEMON = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execve("/bin/sleep", ["sleep", "300"], {})
    os._exit(0)
time.sleep(120)
"""


def _sandbox_sleepers() -> set[int]:
    found = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status") as f:
                uid = next(int(line.split()[1]) for line in f if line.startswith("Uid:"))
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read()
        except (OSError, StopIteration, ValueError):
            continue
        if uid in SANDBOX_UIDS and cmd == b"sleep\x00300\x00":
            found.add(int(name))
    return found


def test_a_killed_servers_daemon_is_reaped_when_the_next_server_starts(tmp_path: Path) -> None:
    """Issue 17, finding 5: a daemon that dropped its environment (the marker the server looks
    for) and started its own session survived a server's SIGKILL until another run started. The
    next server kills it as it starts, by its cgroup and its unleased uid."""
    server = Server(tmp_path / "data", None, admin_token()).start()
    try:
        policy = make_policy(server, "rss=256MiB wall=200s")
        sub = submit(server, DAEMON, policy)  # left running: its server is killed
        deadline = time.monotonic() + 60
        while not (daemons := _sandbox_sleepers()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert daemons, f"the daemon did not start: {wait_for(server, sub['id'], (*FINISHED, 'running'))}"
        server.stop(signal.SIGKILL)
        time.sleep(1)
        assert daemons & _sandbox_sleepers(), "the daemon died with the server: nothing to test"
        # a server of its own (an empty queue): no run starts, which would reap it too
        server = Server(tmp_path / "other", None, admin_token()).start()
        deadline = time.monotonic() + 10
        while daemons & _sandbox_sleepers() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not daemons & _sandbox_sleepers(), "the dead server's daemon still runs"
    finally:
        server.stop()
        for pid in _sandbox_sleepers():  # a daemon of the re-run, if the test failed half way
            os.kill(pid, signal.SIGKILL)


# -- quotas and policies ---------------------------------------------------------------------------


def test_a_token_has_a_quota_of_waiting_submissions_and_stored_bytes(tmp_path: Path) -> None:
    server = Server(
        tmp_path / "data", None, admin_token(), extra=["--max-queued", "2", "--max-stored", "1MiB"]
    )
    server.start()
    try:
        policy = make_policy(server, "wall=30s")
        token = make_token(server)[1]
        ids = [submit(server, "import time; time.sleep(3)", policy, token)["id"] for _ in range(2)]
        with server.client(token) as c:
            r = c.post(f"{API}/submissions", data={"policy": policy}, files={"file": ("a.py", b"pass")})
            assert r.status_code == 429 and "quota" in r.json()["detail"], r.text
            for sub_id in ids:
                c.post(f"{API}/submissions/{sub_id}/cancel")
        for sub_id in ids:
            wait_for(server, sub_id)
        big = b"# " + b"x" * (900 << 10) + b"\n"
        submit(server, big.decode(), policy, token)
        with server.client(token) as c:
            r = c.post(f"{API}/submissions", data={"policy": policy}, files={"file": ("a.py", big)})
        assert r.status_code == 429 and "quota of 1.0 MiB" in r.json()["detail"], r.text
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("budget", "message"),
    [
        ("gpu=1GiB", "whole-run limit"),
        ("fit.rss=100MiB", "whole-run limit"),
        ("rss=5", "takes a size with a unit"),
        ("disk=0.5", "takes a size with a unit"),
    ],
)
def test_a_policy_that_cannot_fail_or_has_no_unit_is_refused(
    server: Server, budget: str, message: str
) -> None:
    with server.client() as c:
        r = c.put(f"{API}/policies/p-{uuid.uuid4().hex[:8]}", json={"budget": budget})
    assert r.status_code == 422 and message in r.json()["detail"], r.text


# -- the CLI ---------------------------------------------------------------------------------------


def memgauge(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memgauge", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_policy_and_token_commands_make_what_submit_needs(server: Server, tmp_path: Path) -> None:
    """Issue 17, finding 6: a new server has no policy; the CLI makes one and a token, and submit
    prints the verdict's limits in units, not raw numbers."""
    admin = ["--server", server.url, "--token", server.admin]
    name = f"edge-{uuid.uuid4().hex[:6]}"
    made = memgauge("policy", "set", name, "rss=512MiB wall=30s", "--description", "edge PCs", *admin)
    assert made.returncode == 0 and "created" in made.stderr, made.stderr
    listed = memgauge("policy", "list", *admin)
    assert f"{name}\trss=512MiB wall=30s  # edge PCs" in listed.stdout
    bad = memgauge("policy", "set", name, "rss=5", *admin)
    assert bad.returncode == 65 and "takes a size with a unit" in bad.stderr.splitlines()[0]
    token = memgauge("token", "create", "ci", *admin)
    assert token.returncode == 0 and token.stdout.startswith("mg_"), token.stderr
    secret = token.stdout.strip()
    refused = memgauge("token", "list", "--server", server.url, "--token", secret)
    assert refused.returncode == 77, refused.stderr
    job = tmp_path / "job.py"
    job.write_text("print('ok')\n")
    done = memgauge("submit", str(job), "--policy", name, "--server", server.url, "--token", secret)
    assert done.returncode == 0, done.stderr
    assert "512 MiB" in done.stderr and "536870912" not in done.stderr, done.stderr
    token_id = next(
        line.split("\t")[0]
        for line in memgauge("token", "list", *admin).stdout.splitlines()
        if "\tci" in line
    )
    assert memgauge("token", "revoke", token_id, *admin).returncode == 0
    assert memgauge("policy", "delete", name, *admin).returncode == 0


def test_a_syntax_error_upload_says_each_sandbox_note_once(server: Server, tmp_path: Path) -> None:
    policy = make_policy(server, "rss=256MiB")
    job = tmp_path / "broken.py"
    job.write_text("def (:\n")
    done = memgauge("submit", str(job), "--policy", policy, "--server", server.url, "--token", server.admin)
    notes = [line for line in done.stderr.splitlines() if "note:" in line]
    assert done.returncode == 2, done.stderr
    assert len(notes) == len(set(n.rsplit(":", 1)[-1] for n in notes)), done.stderr


def test_serve_on_a_port_in_use_fails_before_saying_its_address_or_making_a_token(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        data = tmp_path / "data"
        done = memgauge("serve", "--port", str(port), "--data-dir", str(data), timeout=60)
    assert done.returncode == 69, done.stderr
    assert (
        done.stderr.strip()
        == f"memgauge: error: cannot listen on 127.0.0.1:{port}: the port is in use (another server?)"
    )
    assert not (data / "admin-token").exists()


def test_serve_without_the_service_extra_says_which_to_install(tmp_path: Path) -> None:
    (tmp_path / "fastapi.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'fastapi'\", name='fastapi')\n"
    )
    done = memgauge("serve", "--data-dir", str(tmp_path / "d"), env={"PYTHONPATH": str(tmp_path)})
    assert done.returncode == 64, done.stderr
    assert "pip install 'memgauge[service]'" in done.stderr and "internal error" not in done.stderr


def test_sweep_load_of_a_missing_record_exits_66(tmp_path: Path) -> None:
    done = memgauge("sweep", "--load", str(tmp_path / "missing.json"))
    assert done.returncode == 66 and "no such sweep record" in done.stderr, done.stderr


def test_the_sandbox_record_is_json(server: Server) -> None:
    policy = make_policy(server, "rss=256MiB")
    sub = wait_for(server, submit(server, "print(1)", policy)["id"])
    json.dumps(sub["sandbox"])
    assert set(sub["sandbox"]["runner"]) == {"peak_rss_bytes", "limit_bytes"}
