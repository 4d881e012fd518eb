"""Machines as a resource of the validation service, end to end: real ``memgauge serve`` processes,
real sandboxed runs, real HTTP, on SQLite and PostgreSQL. A policy names a machine; each pass is
admitted there while it fits with what the machine holds (``analysis.admit``), a pass that does not
fit fails, and releasing a share frees it. The shares are checked against the run's own profile:
its container need plus the kernel's share per memory group on the machine's cores."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

import httpx

from memgauge.analysis import kernel_bytes_per_group
from tests.conftest import MIB, PROGRAMS
from tests.integration.test_service_e2e import API, BACKENDS, detail, serving, submit, wait_for
from tests.service_server import Server, make_token

HOLD = (PROGRAMS / "service_hold.py").read_bytes()
# a percentile is simulated in float32 (analysis._plan_sim): ~50 MB figures are exact to 4-byte steps
SLACK = 64


@pytest.fixture(scope="module", params=BACKENDS)
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp(f"machines-{request.param}"), request.param, []) as started:
        yield started


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def run_hold(c: httpx.Client, policy: str, mib: int = 48) -> dict[str, Any]:
    return wait_for(c, submit(c, "hold.py", HOLD, policy, [str(mib), "0.3"])["id"])


def need_of(c: httpx.Client, sub: dict[str, Any]) -> int:
    """The container need the run's own profile records (what a plan member is made of)."""
    peak = c.get(f"{API}/submissions/{sub['id']}/profile").json()["peak"]
    return int(peak.get("needs_bytes") or peak["resident_bytes"])


def test_a_machine_admits_passes_while_they_fit_and_a_release_frees_a_share(server: Server) -> None:
    machine, policy = unique("edge"), unique("fleet")
    with server.client() as c:
        r = c.put(f"{API}/machines/{machine}", json={"memory": "10GiB", "cores": 2})
        assert r.status_code == 201, r.text
        assert r.json()["memory_bytes"] == 10 << 30 and r.json()["held_bytes"] == 0
        r = c.put(f"{API}/policies/{policy}", json={"budget": "rss=1GiB wall=60s", "machine": "no-such"})
        assert r.status_code == 422 and "no machine 'no-such'" in detail(r)
        r = c.put(f"{API}/policies/{policy}", json={"budget": "rss=1GiB wall=60s", "machine": machine})
        assert r.status_code == 201, r.text
        assert (r.json()["machine"], r.json()["rule"]) == (machine, "worst")

        first = run_hold(c, policy)
        assert first["verdict"] == "pass", first
        assert first["machine"] == machine
        got = first["admission"]
        # the share is the run's container need and the kernel's batch per CPU of the machine
        share = need_of(c, first) + kernel_bytes_per_group(2)
        assert got["share_bytes"] == share and share > 48 * MIB
        assert (got["admitted"], got["held"], got["alongside"]) == (True, True, 0)
        assert (got["before_bytes"], got["after_bytes"]) == (0, share)
        assert f"admitted to {machine}" in first["reason"]

        # room for one and a half such shares: the next one is over
        memory = share * 3 // 2
        r = c.put(f"{API}/machines/{machine}", json={"memory": f"{memory}B", "cores": 2})
        assert r.status_code == 200, r.text
        fill = r.json()
        assert (fill["held_bytes"], fill["free_bytes"]) == (share, memory - share)
        assert [s["submission"] for s in fill["shares"]] == [first["id"]]

        second = run_hold(c, policy)
        assert second["verdict"] == "fail", second
        refused = second["admission"]
        assert (refused["admitted"], refused["held"], refused["alongside"]) == (False, False, 1)
        assert refused["before_bytes"] == share
        assert refused["after_bytes"] == share + need_of(c, second) + kernel_bytes_per_group(2) > memory
        assert f"not admitted to {machine}" in second["reason"]
        assert c.get(f"{API}/machines/{machine}").json()["held_bytes"] == share  # nothing taken
        r = c.post(f"{API}/submissions/{second['id']}/release")
        assert r.status_code == 409 and "holds no share" in detail(r)

        r = c.post(f"{API}/submissions/{first['id']}/release")
        assert r.status_code == 200, r.text
        assert r.json()["admission"]["held"] is False and r.json()["admission"]["released_at"]
        assert c.post(f"{API}/submissions/{first['id']}/release").status_code == 409
        assert c.get(f"{API}/machines/{machine}").json()["held_bytes"] == 0

        third = run_hold(c, policy)  # judged without the released one
        assert third["verdict"] == "pass" and third["admission"]["admitted"], third
        assert third["admission"]["before_bytes"] == 0

        # a machine a policy names, or that holds shares, is not deleted
        r = c.delete(f"{API}/machines/{machine}")
        assert r.status_code == 409 and policy in detail(r)
        assert c.delete(f"{API}/policies/{policy}").status_code == 204
        r = c.delete(f"{API}/machines/{machine}")
        assert r.status_code == 409 and "release them first" in detail(r)
        cli = [sys.executable, "-m", "memgauge", "machine", "release", third["id"]]
        released = subprocess.run(
            [*cli, "--server", server.url, "--token", server.admin],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert released.returncode == 0, released.stderr
        assert f"released its share of {machine}" in released.stderr
        assert c.delete(f"{API}/machines/{machine}").status_code == 204
        assert c.get(f"{API}/machines/{machine}").status_code == 404


def test_a_percentile_rule_is_the_policys_and_a_submitter_sees_only_its_own_shares(server: Server) -> None:
    machine, policy = unique("pc"), unique("p99")
    _, secret = make_token(server)
    with server.client() as admin, server.client(secret) as user:
        assert admin.put(f"{API}/machines/{machine}", json={"memory": "4GiB", "cores": 4}).status_code == 201
        r = admin.put(f"{API}/policies/{unique('p')}", json={"budget": "rss=1GiB", "rule": "p99"})
        assert r.status_code == 422 and "name the machine" in detail(r)
        body = {"budget": "rss=1GiB wall=60s", "machine": machine, "rule": "p99"}
        assert admin.put(f"{API}/policies/{policy}", json=body).status_code == 201

        mine = run_hold(user, policy, 32)
        theirs = run_hold(admin, policy, 32)
        assert mine["verdict"] == theirs["verdict"] == "pass", (mine, theirs)
        assert mine["admission"]["rule"] == "p99"
        # one program alone: its combined peak at any offset is its own largest sample, the share
        # (to the few bytes the simulation's float32 leaves: SLACK)
        assert abs(mine["admission"]["after_bytes"] - mine["admission"]["share_bytes"]) <= SLACK
        shares = [mine["admission"]["share_bytes"], theirs["admission"]["share_bytes"]]
        # two: no percentile is over every peak at once
        assert max(shares) - SLACK <= theirs["admission"]["after_bytes"] <= sum(shares) + SLACK

        seen = user.get(f"{API}/machines/{machine}").json()
        assert [s["submission"] for s in seen["shares"]] == [mine["id"], None]  # ids not disclosed
        assert seen["held_bytes"] == sum(shares)
        assert user.post(f"{API}/submissions/{theirs['id']}/release").status_code == 404
        assert user.put(f"{API}/machines/{machine}", json={"memory": "8GiB", "cores": 4}).status_code == 403
        assert user.post(f"{API}/submissions/{mine['id']}/release").status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        {"memory": "8", "cores": 2},  # a size needs its unit
        {"memory": "8GiB", "cores": 0},
        {"memory": "0GiB", "cores": 2},
        {"memory": "lots", "cores": 2},
        {"memory": "8GiB"},
    ],
)
def test_a_machine_that_cannot_exist_is_refused(server: Server, body: dict[str, Any]) -> None:
    with server.client() as c:
        r = c.put(f"{API}/machines/{unique('bad')}", json=body)
    assert r.status_code == 422 and r.json()["detail"]


def test_the_machine_and_policy_commands_make_and_name_a_machine(server: Server) -> None:
    machine, policy = unique("cli"), unique("cli")
    admin = ["--server", server.url, "--token", server.admin]

    def memgauge(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memgauge", *args, *admin],
            capture_output=True,
            text=True,
            timeout=120,
            env=dict(os.environ),
            check=False,
        )

    made = memgauge("machine", "set", machine, "2GiB", "--cores", "2", "--description", "an edge PC")
    assert made.returncode == 0 and "created" in made.stderr, made.stderr
    assert f"{machine}\t2.0 GiB, 2 cores\theld 0 B by 0, free 2.0 GiB" in memgauge("machine", "list").stdout
    bad = memgauge("machine", "set", machine, "2048")
    assert bad.returncode == 65 and "a size with its unit" in bad.stderr, bad.stderr
    made = memgauge("policy", "set", policy, "rss=256MiB", "--machine", machine, "--rule", "p99.9")
    assert made.returncode == 0, made.stderr
    assert f"{policy}\trss=256MiB\t-> {machine} (p99.9)" in memgauge("policy", "list").stdout
    unknown = memgauge("policy", "set", policy, "rss=256MiB", "--machine", "no-such")
    assert unknown.returncode == 65 and "no machine 'no-such'" in unknown.stderr
    with server.client() as c:
        got = c.get(f"{API}/policies/{policy}").json()
    assert (got["machine"], got["rule"]) == (machine, "p99.9")
    busy = memgauge("machine", "delete", machine)
    assert busy.returncode == 65 and f"named by policies {policy}" in busy.stderr, busy.stderr
    assert memgauge("policy", "delete", policy).returncode == 0
    gone = memgauge("machine", "delete", machine)
    assert gone.returncode == 0 and "deleted" in gone.stderr
