"""What the validation service costs per job, and how fast its API answers while jobs run: a real
`memgauge serve` (SQLite, default settings, and `--workers 2`) driven over HTTP from this process.

    .venv/bin/python bench/service_bench.py                        # 3 repetitions, ~10 min on 2 cores
    .venv/bin/python bench/service_bench.py --repeat 1 --parts throughput --jobs 10   # a smoke test
    .venv/bin/python bench/service_bench.py --workers 1,2 --rate 100 --duration 20
    .venv/bin/python bench/service_bench.py --memgauge-rev HEAD    # one commit, not the edited tree

Two parts, each repeated ``--repeat`` times (a fresh server, with a fresh data directory, each time):

- ``throughput``: N trivial jobs (``print("ok")``, policy ``rss=256MiB wall=30s``) submitted at once
  (N POSTs back to back), timed from the first POST until the last job's ``finished_at`` (the
  server's clock, this machine's). The same N programs also run as a bare loop of ``python PROG``
  and as a loop of ``python -m memgauge run -q --json F PROG`` (what a worker does, without the
  sandbox, the queue and HTTP), in a seeded random order per repetition. Each way gets one untimed
  warm-up job first (the service: one submission, waited for).
- ``latency``: a fixed-rate, open-loop load (``--rate`` requests/s for ``--duration`` s; each request
  is sent at its scheduled time whatever the earlier ones are doing, and its latency counts from
  that time, so a slow answer cannot lower the rate or hide the wait) of ``GET
  /api/v1/submissions?limit=20`` (40%), ``GET /api/v1/submissions/{id}`` (40%, ids of earlier
  submissions) and ``GET /healthz`` (20%), once with no job running and once with every worker
  busy (jobs that hold 50 MiB for 2 s, queued enough to outlast the load), in a seeded random order.
  Errors are answers other than 200 and requests that failed or took over 10 s. The client is a
  minimal HTTP/1.1 one on asyncio streams (``RawClient``: keep-alive, a new connection whenever none
  is idle); ``--client httpx`` uses httpx's AsyncClient instead, whose connection pool made requests
  wait on this side for seconds once the server slowed down.

A thread samples every process's CPU time every 2 s, so the output says how much CPU processes other
than the benchmark's own used meanwhile (and whether a pytest ran): numbers from a machine that was
not idle can be told and discarded.

The memgauge every process uses (the server, its runs, the loops) is a byte-compiled snapshot of
this checkout's ``src/`` (or of ``--memgauge-rev``), as in ``sweep_bench.py``. Markdown tables go to
stdout, the raw samples and the summary to ``bench/results/service-TIME.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as _dt
import json
import math
import os
import platform
import random
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sweep_bench import _snapshot_memgauge, _version

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
API = "/api/v1"
POLICY = "bench"
BUDGET = "rss=256MiB wall=30s"
TRIVIAL = 'print("ok")\n'
# a busy job: 50 MiB touched (every page written), held for 2 s
BUSY = 'import time\nheld = b"\\x01" * (50 << 20)\ntime.sleep(2)\nprint(len(held))\n'
BUSY_SECONDS = 2.0
FINISHED = ("done", "failed", "cancelled")
# (kind, weight): the request mix of the latency part
MIX = (("list", 4), ("get", 4), ("healthz", 2))
REQUEST_TIMEOUT = 10.0
WAYS = ("bare", "memgauge-run", "service")


# --- a server ----------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """``memgauge serve`` in a child process of its own session, with a fresh data directory."""

    workers: int
    folder: Path
    port: int = field(default_factory=_free_port)
    token: str = field(default_factory=lambda: "mg_" + secrets.token_urlsafe(32))
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> Server:
        import httpx

        argv = [sys.executable, "-m", "memgauge", "serve", "--port", str(self.port)]
        argv += ["--data-dir", str(self.folder / "data"), "--workers", str(self.workers)]
        with open(self.folder / "server.log", "wb") as log:
            self.proc = subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, "MEMGAUGE_ADMIN_TOKEN": self.token},
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                sys.exit(f"service_bench.py: memgauge serve exited {self.proc.returncode}: {self.log_tail()}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    self.client().put(f"{API}/policies/{POLICY}", json={"budget": BUDGET}).raise_for_status()
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        sys.exit(f"service_bench.py: memgauge serve did not answer in {timeout} s: {self.log_tail()}")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def log_tail(self) -> str:
        return " ".join((self.folder / "server.log").read_text(errors="replace").split())[-600:]

    def client(self) -> Any:
        import httpx

        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=30)

    def cpu_seconds(self) -> float:
        """The server process's own CPU time (not its runs'), from /proc."""
        assert self.proc is not None
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _submit(client: Any, code: str, name: str = "prog.py") -> str:
    r = client.post(f"{API}/submissions", files={"file": (name, code.encode())}, data={"policy": POLICY})
    r.raise_for_status()
    return str(r.json()["id"])


def _wait(client: Any, ids: list[str], timeout: float = 600.0) -> list[dict[str, Any]]:
    """The submissions once all are finished (polled every 0.1 s)."""
    deadline = time.monotonic() + timeout
    wanted = set(ids)
    while True:
        page = client.get(f"{API}/submissions", params={"limit": 500}).json()["items"]
        mine = [s for s in page if s["id"] in wanted]
        if len(mine) == len(wanted) and all(s["status"] in FINISHED for s in mine):
            return mine
        if time.monotonic() > deadline:
            sys.exit(f"service_bench.py: {len(wanted)} submissions not finished after {timeout} s")
        time.sleep(0.1)


def _when(text: str | None) -> float | None:
    return None if text is None else _dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


# --- part (a): throughput ----------------------------------------------------------------------


@dataclass
class Batch:
    """N jobs one way in one repetition. ``extra``: the service's per-job figures."""

    rep: int
    way: str
    workers: int
    jobs: int
    wall: float
    ok: int
    extra: dict[str, Any] = field(default_factory=dict)


def _loop(argv_of: Any, n: int, folder: Path) -> tuple[float, int]:
    """Run ``argv_of(i)`` for i in 0..n-1 one after the other: the wall time, how many exited 0."""
    ok = 0
    start = time.perf_counter()
    for i in range(n):
        done = subprocess.run(argv_of(i), cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ok += done.returncode == 0
    return time.perf_counter() - start, ok


def _bare(rep: int, n: int, folder: Path) -> Batch:
    prog = folder / "prog.py"
    prog.write_text(TRIVIAL)
    _loop(lambda i: [sys.executable, str(prog)], 1, folder)  # warm-up
    wall, ok = _loop(lambda i: [sys.executable, str(prog)], n, folder)
    return Batch(rep, "bare", 1, n, wall, ok)


def _memgauge_run(rep: int, n: int, folder: Path) -> Batch:
    prog = folder / "prog.py"
    prog.write_text(TRIVIAL)

    def argv(i: int) -> list[str]:
        return [sys.executable, "-m", "memgauge", "run", "-q", "--json", str(folder / f"{i}.json"), str(prog)]

    _loop(lambda i: argv(n), 1, folder)  # warm-up
    wall, ok = _loop(argv, n, folder)
    return Batch(rep, "memgauge-run", 1, n, wall, ok)


def _service(rep: int, n: int, workers: int, folder: Path) -> Batch:
    server = Server(workers, folder).start()
    try:
        with server.client() as client:
            _wait(client, [_submit(client, TRIVIAL)])  # warm-up
            start = time.time()
            ids = [_submit(client, TRIVIAL) for _ in range(n)]
            submitted = time.time() - start
            subs = _wait(client, ids)
            sandbox = client.get(f"{API}/submissions/{ids[0]}").json()["sandbox"]
    finally:
        server.stop()
    finished = [_when(s["finished_at"]) for s in subs]
    wall = max(t for t in finished if t is not None) - start
    runs = [
        f - s
        for f, s in ((_when(x["finished_at"]), _when(x["started_at"])) for x in subs)
        if f is not None and s is not None
    ]
    extra = {
        "submit_seconds": submitted,
        "statuses": {st: sum(s["status"] == st for s in subs) for st in FINISHED},
        "verdicts": {v: sum(s["verdict"] == v for s in subs) for v in ("pass", "fail", "error")},
        "run_seconds_median": statistics.median(runs) if runs else None,
        "program_seconds_median": _median([s["wall_seconds"] for s in subs]),
        "reasons": sorted({s["reason"] for s in subs if s["status"] != "done" and s["reason"]})[:3],
        "sandbox": sandbox,
    }
    ok = sum(s["status"] == "done" for s in subs)
    return Batch(rep, f"service-w{workers}", workers, n, wall, ok, extra)


# --- part (b): latency -------------------------------------------------------------------------


@dataclass
class Sample:
    kind: str
    at: float  # scheduled send time, s from the load's start
    sent: float
    done: float
    status: int | None  # None: the request failed (error says how)
    error: str | None = None
    in_flight: int | None = None  # /healthz's figure


class RawClient:
    """A minimal HTTP/1.1 client on asyncio streams, for the load: a request takes an idle
    keep-alive connection or opens a new one at once, so nothing queues on this side. (httpx's
    AsyncClient queued requests in its connection pool for seconds once the server slowed a little,
    on this 2-core machine; ``--client httpx`` measures with it.) A connection idle for longer than
    ``KEEP_IDLE`` s is not reused (uvicorn closes them after 5 s), and a reused one that turns out
    closed is replaced once."""

    KEEP_IDLE = 3.0

    def __init__(self, url: str, token: str) -> None:
        host, _, port = url.removeprefix("http://").partition(":")
        self.host, self.port = host, int(port)
        self.head = f"Host: {url.removeprefix('http://')}\r\nAuthorization: Bearer {token}\r\n\r\n"
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter, float]] = []
        self.opened = 0

    async def get(self, path: str) -> tuple[int, bytes]:
        loop = asyncio.get_running_loop()
        while self.idle:
            reader, writer, since = self.idle.pop()
            if loop.time() - since < self.KEEP_IDLE:
                try:
                    return await self._exchange(reader, writer, path)
                except _ClosedError:
                    break  # closed by the server meanwhile: a new connection
            writer.close()
        reader, writer = await asyncio.open_connection(self.host, self.port)
        self.opened += 1
        return await self._exchange(reader, writer, path)

    async def _exchange(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, path: str
    ) -> tuple[int, bytes]:
        try:
            writer.write(f"GET {path} HTTP/1.1\r\n{self.head}".encode())
            first = await reader.readline()
            if not first:
                raise _ClosedError
            status = int(first.split(b" ", 2)[1])
            length, keep = 0, True
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
                elif name.strip().lower() == b"connection" and value.strip().lower() == b"close":
                    keep = False
            body = await reader.readexactly(length)
        except BaseException:
            writer.close()
            raise
        if keep:
            self.idle.append((reader, writer, asyncio.get_running_loop().time()))
        else:
            writer.close()
        return status, body

    async def close(self) -> None:
        for _, writer, _ in self.idle:
            writer.close()


class _ClosedError(Exception):
    """A keep-alive connection the server had closed."""


async def _one(client: Any, kind: str, path: str, at: float, origin: float) -> Sample:
    loop = asyncio.get_running_loop()
    sent = loop.time()
    try:
        if isinstance(client, RawClient):
            status, body = await asyncio.wait_for(client.get(path), REQUEST_TIMEOUT)
        else:
            r = await client.get(path)
            status, body = r.status_code, r.content
    except Exception as e:  # a failed request is a sample too: an error
        return Sample(kind, at - origin, sent - origin, loop.time() - origin, None, type(e).__name__)
    done = loop.time()
    in_flight = json.loads(body).get("in_flight") if kind == "healthz" and status == 200 else None
    return Sample(kind, at - origin, sent - origin, done - origin, status, None, in_flight)


async def _drive(
    url: str, token: str, rate: float, duration: float, ids: list[str], seed: int, how: str
) -> list[Sample]:
    """Open loop: request i is sent at start + i / rate, whatever the earlier ones are doing."""
    import httpx

    pick = random.Random(seed)
    kinds = [k for k, w in MIX for _ in range(w)]
    if how == "raw":
        client: Any = RawClient(url, token)
    else:
        limits = httpx.Limits(max_connections=1000, max_keepalive_connections=1000)
        headers = {"Authorization": f"Bearer {token}"}
        client = httpx.AsyncClient(base_url=url, headers=headers, timeout=REQUEST_TIMEOUT, limits=limits)
    try:
        for _ in range(5):  # a connection open, untimed
            await client.get("/healthz")
        loop = asyncio.get_running_loop()
        origin = loop.time() + 0.2
        tasks = []
        for i in range(round(rate * duration)):
            kind = pick.choice(kinds)
            path = {
                "list": f"{API}/submissions?limit=20",
                "get": f"{API}/submissions/{pick.choice(ids)}",
                "healthz": "/healthz",
            }[kind]
            at = origin + i / rate
            delay = at - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(_one(client, kind, path, at, origin)))
        return list(await asyncio.gather(*tasks))
    finally:
        await (client.close() if how == "raw" else client.aclose())


@dataclass
class Load:
    """One load run: ``busy`` whether jobs ran; ``server_cpu``: the server process's CPU share
    during it; ``client_cpu``: this process's (the load generator's)."""

    rep: int
    workers: int
    busy: bool
    samples: list[Sample]
    server_cpu: float
    client_cpu: float
    duration: float


def _latency(
    rep: int, workers: int, rate: float, duration: float, folder: Path, seed: int, how: str
) -> list[Load]:
    server = Server(workers, folder).start()
    loads: list[Load] = []
    try:
        with server.client() as client:
            # something to list and to read: 25 finished submissions
            ids = [_submit(client, TRIVIAL) for _ in range(25)]
            _wait(client, ids)
            order = [False, True]
            random.Random(seed).shuffle(order)
            for busy in order:
                queued: list[str] = []
                if busy:
                    # enough to keep every worker busy through the load and a margin
                    count = workers * math.ceil((duration + 15) / BUSY_SECONDS)
                    queued = [_submit(client, BUSY) for _ in range(count)]
                    _until(client, lambda h: h["in_flight"] >= workers, "every worker busy")
                    time.sleep(1.0)
                else:
                    _until(client, lambda h: h["in_flight"] == 0, "no job running")
                cpu0, mine0, t0 = server.cpu_seconds(), _own_cpu(), time.monotonic()
                samples = asyncio.run(_drive(server.url, server.token, rate, duration, ids, seed + busy, how))
                elapsed = time.monotonic() - t0
                cpu = (server.cpu_seconds() - cpu0) / elapsed
                loads.append(Load(rep, workers, busy, samples, cpu, (_own_cpu() - mine0) / elapsed, duration))
                for sub_id in queued:  # what is left of the busy jobs
                    client.post(f"{API}/submissions/{sub_id}/cancel")
                if queued:
                    _wait(client, queued)
    finally:
        server.stop()
    return loads


def _until(client: Any, test: Any, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not test(client.get("/healthz").json()):
        if time.monotonic() > deadline:
            sys.exit(f"service_bench.py: not {what} after {timeout} s")
        time.sleep(0.1)


def _own_cpu() -> float:
    t = os.times()
    return t.user + t.system


# --- summary -----------------------------------------------------------------------------------


def _median(values: list[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return statistics.median(got) if got else None


def _percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0-100)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 1000:.1f}"


def _throughput_table(batches: list[Batch], reps: int) -> str:
    seen = {b.way for b in batches}
    ways = [w for w in ("bare", "memgauge-run") if w in seen] + sorted(
        w for w in seen if w.startswith("service")
    )
    wall = {w: statistics.median(b.wall for b in batches if b.way == w) for w in ways}
    per_rep = {(b.rep, b.way): b.wall for b in batches}

    def ratio(way: str, base: str) -> float | None:
        got = [per_rep[(r, way)] / per_rep[(r, base)] for r in range(reps) if (r, base) in per_rep]
        return _median(list(got))

    n = batches[0].jobs
    out = [
        f"### Throughput: {n} trivial jobs (median of {reps}; ratios: median of the per-repetition ratios)\n",
        "| way | workers | wall s (min-max) | jobs/min | s per job | extra s per job vs bare | x bare "
        "| x memgauge run loop | jobs done |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for way in ways:
        mine = [b for b in batches if b.way == way]
        walls = [b.wall for b in mine]
        x_bare = ratio(way, "bare")
        x_run = ratio(way, "memgauge-run")
        extra = (wall[way] - wall["bare"]) / n if "bare" in wall else None
        out.append(
            f"| {way} | {mine[0].workers} | {wall[way]:.2f} ({min(walls):.2f}-{max(walls):.2f}) "
            f"| {n / wall[way] * 60:.0f} | {wall[way] / n:.3f} | {'' if way == 'bare' else f'{extra:+.3f}'} "
            f"| {'' if x_bare is None else f'{x_bare:.2f}x'} | {'' if x_run is None else f'{x_run:.2f}x'} "
            f"| {min(b.ok for b in mine)}-{max(b.ok for b in mine)} of {n} |"
        )
    services = [w for w in ways if w.startswith("service")]
    if services:
        out.append(
            "\n| way | submitting N s | one job, start to finish s | the program's own wall s | statuses |"
        )
        out.append("| --- | ---: | ---: | ---: | --- |")
        for way in services:
            mine = [b for b in batches if b.way == way]
            statuses: dict[str, int] = {}
            for b in mine:
                for k, v in b.extra["statuses"].items():
                    statuses[k] = statuses.get(k, 0) + v
            out.append(
                f"| {way} | {_median([b.extra['submit_seconds'] for b in mine]):.3f} "
                f"| {_fmt(_median([b.extra['run_seconds_median'] for b in mine]))} "
                f"| {_fmt(_median([b.extra['program_seconds_median'] for b in mine]))} "
                f"| {', '.join(f'{k} {v}' for k, v in statuses.items() if v)} |"
            )
    return "\n".join(out) + "\n"


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _latency_summary(loads: list[Load]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for workers in sorted({x.workers for x in loads}):
        for busy in (False, True):
            mine = [x for x in loads if x.workers == workers and x.busy == busy]
            if not mine:
                continue
            samples = [s for x in mine for s in x.samples]
            good = [s for s in samples if s.status == 200]
            latency = [s.done - s.at for s in good]
            per_rep = [_percentile([s.done - s.at for s in x.samples if s.status == 200], 99) for x in mine]
            sent = [s.sent for s in samples]
            healthz = [s.in_flight for s in samples if s.in_flight is not None]
            out[f"w{workers}-{'busy' if busy else 'idle'}"] = {
                "workers": workers,
                "busy": busy,
                "requests": len(samples),
                "errors": len(samples) - len(good),
                "error_kinds": sorted({s.error or str(s.status) for s in samples if s.status != 200}),
                "sent_per_s": _median(
                    [len(x.samples) / (x.samples[-1].sent - x.samples[0].sent) for x in mine]
                ),
                "send_lag_max": max(s.sent - s.at for s in samples),
                "span": max(sent) - min(sent),
                "p50": _percentile(latency, 50),
                "p90": _percentile(latency, 90),
                "p99": _percentile(latency, 99),
                "max": max(latency),
                "p99_per_rep": per_rep,
                "by_kind_p99": {
                    k: _percentile([s.done - s.at for s in good if s.kind == k], 99)
                    for k, _ in MIX
                    if any(s.kind == k for s in good)
                },
                "server_cpu": _median([x.server_cpu for x in mine]),
                "client_cpu": _median([x.client_cpu for x in mine]),
                "in_flight_at_workers": (sum(h >= workers for h in healthz) / len(healthz))
                if healthz
                else None,
            }
    return out


def _latency_table(summary: dict[str, Any], rate: float, duration: float, reps: int) -> str:
    out = [
        f"### API latency under {rate:.0f} requests/s for {duration:.0f} s (samples of the {reps} "
        "repetitions pooled; latency counts from each request's scheduled send time)\n",
        "| workers | jobs running | requests | sent/s | errors | p50 ms | p90 ms | p99 ms (per repetition) "
        "| max ms | p99 busy / idle | server CPU | load generator CPU | /healthz saw every worker busy |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for s in summary.values():
        idle = summary.get(f"w{s['workers']}-idle")
        ratio = f"{s['p99'] / idle['p99']:.2f}x" if s["busy"] and idle else ""
        per_rep = ", ".join(_ms(v) for v in s["p99_per_rep"])
        busy_seen = s["in_flight_at_workers"]
        out.append(
            f"| {s['workers']} | {'yes' if s['busy'] else 'no'} | {s['requests']} | {s['sent_per_s']:.1f} "
            f"| {s['errors']} | {_ms(s['p50'])} | {_ms(s['p90'])} | {_ms(s['p99'])} ({per_rep}) "
            f"| {_ms(s['max'])} | {ratio} | {s['server_cpu'] * 100:.0f}% | {s['client_cpu'] * 100:.0f}% "
            f"| {'' if not s['busy'] or busy_seen is None else f'{busy_seen * 100:.0f}%'} |"
        )
    kinds = [k for k, _ in MIX]
    out.append("\n| workers | jobs running | " + " | ".join(f"p99 ms {k}" for k in kinds) + " |")
    out.append("| ---: | --- | " + " | ".join("---:" for _ in kinds) + " |")
    for s in summary.values():
        cells = " | ".join(_ms(s["by_kind_p99"].get(k)) for k in kinds)
        out.append(f"| {s['workers']} | {'yes' if s['busy'] else 'no'} | {cells} |")
    return "\n".join(out) + "\n"


# --- main --------------------------------------------------------------------------------------


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="service_bench.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", "--reps", type=int, default=3, help="repetitions of each part (default 3)")
    p.add_argument("--parts", default="throughput,latency", help="throughput, latency or both (default)")
    p.add_argument("--workers", default="1,2", help="the servers' --workers, comma-separated (default 1,2)")
    p.add_argument("--jobs", type=int, default=30, help="jobs per throughput batch (default 30)")
    p.add_argument("--rate", type=float, default=100.0, help="requests per second (default 100)")
    p.add_argument("--duration", type=float, default=20.0, help="seconds of load per run (default 20)")
    p.add_argument(
        "--client",
        choices=["raw", "httpx"],
        default="raw",
        help="the load's HTTP client: raw (asyncio streams, the default) or httpx's AsyncClient",
    )
    p.add_argument("--memgauge-rev", metavar="REV", help="use this commit's memgauge, not the working tree's")
    p.add_argument("--json", metavar="PATH", help="results file (default bench/results/service-TIME.json)")
    args = p.parse_args(argv)
    args.parts = [x.strip() for x in args.parts.split(",") if x.strip()]
    if unknown := [x for x in args.parts if x not in ("throughput", "latency")]:
        p.error(f"unknown part(s): {', '.join(unknown)}")
    args.workers = [int(w) for w in args.workers.split(",")]
    if args.repeat < 1 or args.jobs < 1 or args.rate <= 0 or args.duration <= 0 or min(args.workers) < 1:
        p.error("--repeat, --jobs, --rate, --duration and --workers must be positive")
    return args


def _loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


class Watch(threading.Thread):
    """Every 2 s: the CPU time every process used since the last look, split into ours (this
    process and its descendants: the servers, their runs, the loops) and everyone else's, and
    whether a pytest runs (this benchmark runs none). So a run on a machine that was not idle shows."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.samples: list[dict[str, Any]] = []
        self.foreign: dict[str, float] = {}  # command -> CPU seconds, everyone else's
        self._quit = threading.Event()
        self.vmstat = _vmstat()

    def run(self) -> None:
        before, t0 = _cpu_by_process(), time.monotonic()
        while not self._quit.wait(2.0):
            now, t1 = _cpu_by_process(), time.monotonic()
            ours = _descendants(os.getpid(), {pid: p[0] for pid, p in now.items()})
            theirs = 0.0
            for pid, (_, cpu, command) in now.items():
                used = cpu - before[pid][1] if pid in before else cpu
                if pid not in ours and used > 0:
                    theirs += used
                    self.foreign[command] = self.foreign.get(command, 0.0) + used
            self.samples.append(
                {
                    "time": time.time(),
                    "load_1min": os.getloadavg()[0],
                    "foreign_cpus": theirs / (t1 - t0),
                    "pytest": any("pytest" in c for pid, (_, _, c) in now.items() if pid not in ours),
                }
            )
            before, t0 = now, t1

    def stop(self) -> dict[str, Any]:
        self._quit.set()
        self.join()
        shares = [x["foreign_cpus"] for x in self.samples]
        vmstat = {k: v - self.vmstat.get(k, 0) for k, v in _vmstat().items()}
        top = sorted(((c, v) for c, v in self.foreign.items() if v >= 0.1), key=lambda kv: -kv[1])[:5]
        return {
            "samples": len(self.samples),
            "max_load_1min": max((x["load_1min"] for x in self.samples), default=None),
            "samples_with_pytest": sum(x["pytest"] for x in self.samples),
            "foreign_cpus_mean": statistics.fmean(shares) if shares else None,
            "foreign_cpus_max": max(shares, default=None),
            "foreign_top": {command[:120]: round(cpu, 1) for command, cpu in top},
            # pages read back in: file pages the kernel had dropped (this VM runs DAMON's pageout)
            "vmstat_delta": vmstat,
        }


def _vmstat() -> dict[str, int]:
    wanted = ("pgmajfault", "workingset_refault_file", "pswpin", "pswpout")
    out: dict[str, int] = {}
    for line in Path("/proc/vmstat").read_text().splitlines():
        name, _, value = line.partition(" ")
        if name in wanted:
            out[name] = int(value)
    return out


def _cpu_by_process() -> dict[int, tuple[int, float, str]]:
    """pid -> (parent pid, CPU seconds so far, command line) of every process."""
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[int, tuple[int, float, str]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
            command = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        out[int(name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / tick, command.strip())
    return out


def _descendants(root: int, parents: dict[int, int]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    found, todo = {root}, [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    started = _dt.datetime.now()
    load_before = _loadavg()
    watch = Watch()
    watch.start()
    batches: list[Batch] = []
    loads: list[Load] = []
    shuffler = random.Random(20261123)
    with tempfile.TemporaryDirectory(prefix="memgauge-service-bench-") as tmp_name:
        tmp = Path(tmp_name)
        source = _snapshot_memgauge(args.memgauge_rev, tmp / "memgauge")
        for rep in range(args.repeat):
            if "throughput" in args.parts:
                ways = ["bare", "memgauge-run", *(f"service-w{w}" for w in args.workers)]
                shuffler.shuffle(ways)
                for way in ways:
                    folder = tmp / f"{rep}-{way}"
                    folder.mkdir()
                    if way == "bare":
                        batch = _bare(rep, args.jobs, folder)
                    elif way == "memgauge-run":
                        batch = _memgauge_run(rep, args.jobs, folder)
                    else:
                        batch = _service(rep, args.jobs, int(way.removeprefix("service-w")), folder)
                    batches.append(batch)
                    print(
                        f"[rep {rep + 1}/{args.repeat}] throughput {way:<13} {batch.wall:7.2f} s "
                        f"({batch.ok}/{batch.jobs} ok)",
                        file=sys.stderr,
                    )
            if "latency" in args.parts:
                for workers in args.workers:
                    folder = tmp / f"{rep}-latency-w{workers}"
                    folder.mkdir()
                    got = _latency(
                        rep, workers, args.rate, args.duration, folder, 1000 * rep + workers, args.client
                    )
                    loads.extend(got)
                    for x in got:
                        ok = [s.done - s.at for s in x.samples if s.status == 200]
                        state = "busy" if x.busy else "idle"
                        print(
                            f"[rep {rep + 1}/{args.repeat}] latency w{workers} {state}: "
                            f"p99 {_ms(_percentile(ok, 99) if ok else None)} ms, "
                            f"{len(x.samples) - len(ok)} errors",
                            file=sys.stderr,
                        )
    load_after = _loadavg()
    watched = watch.stop()
    print(
        f"load average before {load_before}, after {load_after}; every 2 s, {watched['samples']} samples: "
        f"the 1-minute load at most {watched['max_load_1min']:.2f}, other processes' CPU "
        f"{watched['foreign_cpus_mean']:.2f} cores on average and {watched['foreign_cpus_max']:.2f} at most, "
        f"a pytest running in {watched['samples_with_pytest']}"
    )
    print(f"/proc/vmstat meanwhile: {', '.join(f'{k} +{v}' for k, v in watched['vmstat_delta'].items())}")
    if watched["foreign_top"]:
        print("others' CPU seconds: " + "; ".join(f"{c} {v}" for c, v in watched["foreign_top"].items()))
    print()
    if batches:
        print(_throughput_table(batches, args.repeat))
        sandbox = next((b.extra.get("sandbox") for b in batches if b.extra.get("sandbox")), None)
        if sandbox:
            applied = ", ".join(sandbox.get("applied", {}))
            missing = "; ".join(f"{k} ({v})" for k, v in sandbox.get("not_applied", {}).items()) or "none"
            print(f"The service's runs were sandboxed: applied {applied}; not applied: {missing}\n")
        for b in batches:
            if b.extra.get("reasons"):
                print(f"not done ({b.way}, rep {b.rep + 1}): {'; '.join(b.extra['reasons'])}")
    latency = _latency_summary(loads) if loads else {}
    if latency:
        print(_latency_table(latency, args.rate, args.duration, args.repeat))
    out = Path(args.json) if args.json else RESULTS_DIR / f"service-{started:%Y%m%d-%H%M%S}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "command": [sys.executable, *sys.argv],
        "started_at": started.isoformat(timespec="seconds"),
        "duration_s": (_dt.datetime.now() - started).total_seconds(),
        "load_average": {"before": load_before, "after": load_after, "watched": watched},
        "config": {k: v for k, v in vars(args).items() if k != "json"},
        "machine": {
            "nproc": len(os.sched_getaffinity(0)),
            "kernel": platform.release(),
            "python": platform.python_version(),
            "packages": {p: _version(p) for p in ("memgauge", "fastapi", "uvicorn", "httpx", "sqlalchemy")},
        },
        "memgauge_source": source,
        "throughput": [asdict(b) for b in batches],
        "latency": latency,
        "latency_samples": [{**asdict(x), "samples": [asdict(s) for s in x.samples]} for x in loads],
    }
    out.write_text(json.dumps(payload, indent=1))
    print(f"results: {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
