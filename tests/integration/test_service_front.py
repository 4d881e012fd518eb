"""The server keeps serving authenticated users while outsiders hold idle or slow connections
(``service/_front.py``): a deadline for a request's headers, a limit per client address, and idle
connections that make room for working ones. A real ``memgauge serve``; the outsiders are real TCP
connections from other loopback addresses (all of 127.0.0.0/8 is this host's on Linux)."""

from __future__ import annotations

import asyncio
import http.client
import resource
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.service_server import Server, admin_token

pytest.importorskip("uvicorn")

# a header line the slow clients never finish: one byte every SLOW_EVERY seconds
SLOW_BYTES = b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 10_000
SLOW_EVERY = 2.0


def _raise_open_files(need: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            pytest.skip(f"the open-files hard limit ({hard}) is below the {need} this test holds")
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


@dataclass
class Outsiders:
    """Connections held open from a child process (so that their work does not slow the timed
    client in this one): each one the server closes is opened again at once (holding a place is
    the attack). ``slow``: these send a header byte every ``SLOW_EVERY`` seconds, not nothing.
    ``held``, ``opened`` and ``closed_by_server`` are counted as they go."""

    port: int
    idle: list[tuple[str, int]]  # (source address, connections from it)
    slow: list[tuple[str, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")
        self._held = ctx.Value("i", 0)
        self._closed = ctx.Value("i", 0)
        self._stop = ctx.Event()
        self._process = ctx.Process(
            target=_hold_all, args=(self.port, self.idle, self.slow, self._held, self._closed, self._stop)
        )

    @property
    def held(self) -> int:
        return int(self._held.value)

    @property
    def closed_by_server(self) -> int:
        return int(self._closed.value)

    def start(self) -> None:
        self._process.start()

    def stop(self) -> None:
        self._stop.set()
        self._process.join(30)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()


def _hold_all(
    port: int, idle: list[tuple[str, int]], slow: list[tuple[str, int]], held: Any, closed: Any, stop: Any
) -> None:
    need = sum(n for _, n in idle) + sum(n for _, n in slow) + 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))

    async def hold(addr: str, is_slow: bool) -> None:
        while not stop.is_set():
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(addr, 0))
            except OSError:
                await asyncio.sleep(0.2)
                continue
            with held.get_lock():
                held.value += 1
            try:
                i = 0
                while True:
                    if is_slow:
                        writer.write(SLOW_BYTES[i : i + 1])
                        i += 1
                    try:
                        data = await asyncio.wait_for(reader.read(1024), SLOW_EVERY if is_slow else 3600)
                    except TimeoutError:
                        continue
                    if not data:
                        break
            except OSError:
                pass
            finally:
                with held.get_lock():
                    held.value -= 1
                if not stop.is_set():
                    with closed.get_lock():
                        closed.value += 1
                writer.close()

    async def main() -> None:
        tasks = [
            asyncio.create_task(hold(addr, is_slow))
            for is_slow, groups in ((False, idle), (True, slow))
            for addr, n in groups
            for _ in range(n)
        ]
        while not stop.is_set():
            await asyncio.sleep(0.1)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(main())


@contextmanager
def outsiders(o: Outsiders, *, settle: int) -> Iterator[Outsiders]:
    o.start()
    try:
        deadline = time.monotonic() + 60
        while o.held < settle and time.monotonic() < deadline:
            time.sleep(0.2)
        yield o
    finally:
        o.stop()


def _timed_get(port: int, path: str, token: str) -> tuple[float, int]:
    """One request on a new connection: its time (connect to the last byte) and status."""
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {token}"})
        response = conn.getresponse()
        response.read()
        status = response.status
    finally:
        conn.close()
    return time.perf_counter() - start, status


@dataclass
class Window:
    """Authenticated requests over one window: their statuses, p50 and p99 (seconds), and the median
    count of outsiders' connections held while they ran."""

    statuses: list[int]
    p50: float
    p99: float
    held: float

    def __str__(self) -> str:
        return (
            f"{len(self.statuses)} requests: p50 {self.p50 * 1000:.1f} ms, p99 {self.p99 * 1000:.1f} ms, "
            f"{self.held:.0f} outsiders' connections held (median)"
        )


def _window(server: Server, o: Outsiders | None, seconds: float) -> Window:
    times, statuses, held = [], [], []
    end = time.monotonic() + seconds
    while time.monotonic() < end or len(times) < 400:
        took, status = _timed_get(server.port, "/api/v1/policies", server.admin)
        times.append(took)
        statuses.append(status)
        held.append(float(o.held) if o is not None else 0.0)
    return Window(statuses, _percentile(times, 0.5), _percentile(times, 0.99), _percentile(held, 0.5))


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def test_authenticated_requests_keep_their_latency_under_2000_idle_and_200_slow_connections(
    tmp_path: Path,
) -> None:
    _raise_open_files(8192)
    # a header deadline of 5 s (10 s by default): over the 12 s window every outsider is closed at
    # least twice
    server = Server(tmp_path / "data", None, admin_token(), extra=["--header-timeout", "5s"]).start()
    try:
        # 40 addresses x 50 idle, 10 x 20 slow: each address under the per-client limit (128), so
        # only the header deadline and the room-making rules stand between them and the server
        pairs = []
        for _ in range(2):
            # the same requests without outsiders first: on a shared machine other processes can
            # make even those slow, so the p99 under attack is held to 100 ms, or to twice what
            # the machine gave without the attack when that is more; a server whose idle
            # connections take places or time fails either way (before the front: all 503)
            baseline = _window(server, None, seconds=5.0)
            o = Outsiders(
                server.port,
                idle=[(f"127.0.1.{i}", 50) for i in range(1, 41)],
                slow=[(f"127.0.2.{i}", 20) for i in range(1, 11)],
            )
            with outsiders(o, settle=2150):
                attacked = _window(server, o, seconds=12.0)
                closed = o.closed_by_server
            print(f"without outsiders: {baseline}\nwith them: {attacked}")
            assert set(attacked.statuses) == {200}, {
                s: attacked.statuses.count(s) for s in set(attacked.statuses)
            }
            # held throughout: each one closed is opened again at once, so the median request saw
            # them all but the few being reopened
            assert attacked.held >= 2100, attacked
            # closed by the server at its deadline, each at least once
            assert closed >= 2200, closed
            pairs.append((baseline, attacked))
            if attacked.p99 < max(0.100, 2 * baseline.p99):
                break
        assert any(a.p99 < max(0.100, 2 * b.p99) for b, a in pairs), [(str(b), str(a)) for b, a in pairs]
    finally:
        server.stop()


def test_a_connection_without_its_headers_is_closed_at_the_deadline(tmp_path: Path) -> None:
    server = Server(tmp_path / "data", None, admin_token(), extra=["--header-timeout", "2s"]).start()
    try:
        idle = socket.create_connection(("127.0.0.1", server.port))
        slow = socket.create_connection(("127.0.0.1", server.port))
        start = time.monotonic()
        lasted = {}
        for s in (idle, slow):
            s.settimeout(0.5)
        sent = 0
        while len(lasted) < 2 and time.monotonic() - start < 15:
            if "slow" not in lasted:
                slow.send(SLOW_BYTES[sent : sent + 1])
                sent += 1
            for name, s in (("idle", idle), ("slow", slow)):
                if name in lasted:
                    continue
                try:
                    if s.recv(1024) == b"":
                        lasted[name] = time.monotonic() - start
                except TimeoutError:
                    pass
                except OSError:
                    lasted[name] = time.monotonic() - start
        assert set(lasted) == {"idle", "slow"}, lasted
        assert all(1.5 <= t <= 6.0 for t in lasted.values()), lasted
        # a request that completes its headers in time is served, on a connection kept alive
        with server.client() as c:
            assert c.get("/api/v1/policies").status_code == 200
            time.sleep(1.0)
            assert c.get("/api/v1/policies").status_code == 200
        idle.close()
        slow.close()
    finally:
        server.stop()


def test_one_client_address_holds_at_most_its_limit(tmp_path: Path) -> None:
    server = Server(
        tmp_path / "data", None, admin_token(), extra=["--max-connections-per-client", "5"]
    ).start()
    try:
        address = ("127.0.0.1", server.port)
        held = [socket.create_connection(address, source_address=("127.0.3.1", 0)) for _ in range(5)]
        extra = socket.create_connection(address, source_address=("127.0.3.1", 0))
        extra.settimeout(5)
        assert extra.recv(1) == b""  # closed at once
        for s in held:
            s.settimeout(0.2)
            with pytest.raises(TimeoutError):
                s.recv(1)  # still open
        # another address is not affected
        assert _timed_get(server.port, "/healthz", server.admin)[1] == 200
        for s in (*held, extra):
            s.close()
    finally:
        server.stop()


def test_idle_connections_make_room_for_working_ones(tmp_path: Path) -> None:
    # 100 places, 150 idle connections trying to hold them (from 3 addresses under the per-client
    # limit): every new connection closes the oldest idle one, so requests are served, never 503
    server = Server(
        tmp_path / "data", None, admin_token(), extra=["--max-connections", "100", "--header-timeout", "60s"]
    ).start()
    try:
        o = Outsiders(server.port, idle=[(f"127.0.4.{i}", 50) for i in range(1, 4)])
        with outsiders(o, settle=95):
            results = [_timed_get(server.port, "/api/v1/policies", server.admin) for _ in range(50)]
        assert {status for _, status in results} == {200}
        assert o.closed_by_server >= 50  # the outsiders were the ones closed
    finally:
        server.stop()
