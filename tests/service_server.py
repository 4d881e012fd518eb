"""A real ``memgauge serve`` for the service's tests: a child process on a free port, its own data
directory, a known admin token; SQLite by default, or a fresh PostgreSQL database of its own."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

PG_ADMIN_URL = os.environ.get("MEMGAUGE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """A running server. ``url``: its base URL; ``admin``: an admin token; ``log``: its stderr."""

    data_dir: Path
    db: str | None
    admin: str
    port: int = field(default_factory=free_port)
    extra: list[str] = field(default_factory=list)
    proc: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> Server:
        self.log = self.data_dir.parent / f"server-{self.port}-{int(time.time() * 1000)}.log"
        cmd = [
            sys.executable,
            "-m",
            "memgauge",
            "serve",
            "--port",
            str(self.port),
            "--data-dir",
            str(self.data_dir),
        ]
        if self.db is not None:
            cmd += ["--db", self.db]
        env = {**os.environ, "MEMGAUGE_ADMIN_TOKEN": self.admin}
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [*cmd, *self.extra], stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        deadline = time.monotonic() + timeout
        import httpx

        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"memgauge serve exited {self.proc.returncode}:\n{self.log.read_text()}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return self
            time.sleep(0.1)
        raise AssertionError(f"memgauge serve did not answer in {timeout} s:\n{self.log.read_text()}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int | None:
        """SIGTERM: a graceful stop; SIGKILL: a crash (only the server process, not its runs)."""
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        if sig == signal.SIGKILL:
            self.proc.kill()
        else:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            return self.proc.wait()

    def client(self, token: str | None = None) -> Any:
        import httpx

        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {token or self.admin}"}, timeout=30
        )


def admin_token() -> str:
    return "mg_" + secrets.token_urlsafe(32)


def _unavailable(reason: str) -> None:
    if os.environ.get("MEMGAUGE_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"{reason}, and MEMGAUGE_REQUIRE_POSTGRES=1")
    pytest.skip(reason)


@contextlib.contextmanager
def postgres_database() -> Iterator[str]:
    """A new, empty PostgreSQL database (dropped afterwards); its URL."""
    try:
        import psycopg
    except ImportError:
        _unavailable("psycopg is not installed")
    name = f"memgauge_test_{uuid.uuid4().hex[:12]}"
    try:
        admin = psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as e:
        _unavailable(f"no PostgreSQL at {PG_ADMIN_URL}: {e}")
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def write_program(path: Path, code: str) -> Path:
    path.write_text(code)
    return path


def make_token(server: Server, role: str = "submitter") -> tuple[int, str]:
    """A new token's id and secret, made with the server's admin token."""
    with server.client() as c:
        r = c.post("/api/v1/tokens", json={"name": f"test-{role}-{uuid.uuid4().hex[:6]}", "role": role})
    assert r.status_code == 201, r.text
    return int(r.json()["id"]), str(r.json()["token"])


def make_policy(server: Server, budget: str, name: str | None = None) -> str:
    """A policy of ``budget`` (a fresh name unless given), made with the server's admin token."""
    name = name or f"p-{uuid.uuid4().hex[:10]}"
    with server.client() as c:
        r = c.put(f"/api/v1/policies/{name}", json={"budget": budget})
    assert r.status_code in (200, 201), r.text
    return name
