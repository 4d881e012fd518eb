"""Policies that prove a pass (``prove: true``, issue 16): real ``memgauge serve`` processes, real
HTTP, real sandboxed runs in real memory cgroups, on SQLite and PostgreSQL (skipped without one, as
in ``test_service_e2e.py``). A pass is run again under the budget's rss as a hard limit, caches
cold: OOM-killed there (by the program itself or by its child) it is a fail; surviving, a pass
with the proof recorded in the API and on the submission's page. And a leftover of issue 20: a
policy's limits say which are lower bounds (``samples_per_s>=400``)."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

import httpx

from memgauge.isolation._probes import unshare_problem
from tests.conftest import MIB, PROGRAMS
from tests.service_server import Server, admin_token, postgres_database

ROOT = sys.platform == "linux" and os.geteuid() == 0
PROBLEM = unshare_problem(("--net", "--mount")) if sys.platform == "linux" else "not Linux"
pytestmark = pytest.mark.skipif(not ROOT or bool(PROBLEM), reason=f"needs root and namespaces ({PROBLEM})")

API = "/api/v1"
FINISHED = ("done", "failed", "cancelled")
PROGRAM = (PROGRAMS / "service_prove_sized.py").read_bytes()
# the measured run is held at the server's cap (1 GiB: the program writes 40 MiB), the proof at
# the policy's rss (under 1 GiB: it writes 300 MiB)
BUDGET = "rss=200MiB wall=60s"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server per backend, its runs held at 1 GiB; the PostgreSQL one runs fewer programs (the
    proof does not depend on the database; storing and reading it back does)."""
    with ExitStack() as stack:
        url = stack.enter_context(postgres_database()) if request.param == "postgres" else None
        data = tmp_path_factory.mktemp(f"prove-{request.param}") / "data"
        # its data outside /tmp would matter only for tests that read it from a run; none here
        server = Server(data, url, admin_token(), extra=["--workers", "2", "--max-memory", "1GiB"]).start()
        stack.callback(server.stop)
        yield server


def put_policy(client: httpx.Client, name: str, budget: str, prove: bool) -> httpx.Response:
    return client.put(f"{API}/policies/{name}", json={"budget": budget, "prove": prove})


def submit(client: httpx.Client, policy: str, *args: str) -> str:
    r = client.post(
        f"{API}/submissions",
        data={"policy": policy, "args": json.dumps(list(args))},
        files={"file": ("main.py", PROGRAM)},
    )
    assert r.status_code == 201, r.text
    assert r.json()["prove"] is True
    return str(r.json()["id"])


def finished(client: httpx.Client, sub_id: str, timeout: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        sub: dict[str, Any] = client.get(f"{API}/submissions/{sub_id}").json()
        if sub["status"] in FINISHED:
            return sub
        assert time.monotonic() < deadline, f"still {sub['status']} after {timeout} s: {sub}"
        time.sleep(0.2)


def ui_page(server: Server, path: str) -> httpx.Response:
    """A web page as a signed-in admin sees it (the session cookie holds the token)."""
    with httpx.Client(base_url=server.url, cookies={"memgauge_token": server.admin}) as ui:
        page = ui.get(path)
    assert page.status_code == 200, page.text
    return page


def rss_result(client: httpx.Client, sub_id: str) -> dict[str, Any]:
    verdict = client.get(f"{API}/submissions/{sub_id}/verdict").json()
    (rss,) = [r for r in verdict["results"] if r["key"] == "rss"]
    return dict(rss)


def test_a_pass_killed_under_the_budget_in_its_proof_fails_and_one_that_survives_passes(
    server: Server,
) -> None:
    with server.client() as c:
        assert put_policy(c, "proves", BUDGET, True).status_code == 201
        assert c.get(f"{API}/policies/proves").json()["prove"] is True
        # submitted together: the proofs run while the others are measured
        sqlite = server.db is None
        killed = {
            where: submit(c, "proves", where) for where in ("self", "child") if sqlite or where == "child"
        }
        survives = submit(c, "proves", "child", "fixed") if sqlite else None
        for where, sub_id in killed.items():
            sub = finished(c, sub_id)
            assert (sub["status"], sub["verdict"]) == ("done", "fail"), (where, sub)
            # the measured run passed: 40 MiB against 200 MiB
            assert sub["peak_rss_bytes"] < 200 * MIB, (where, sub)
            proof = sub["proof"]
            assert proof["made"] and proof["outcome"] == "OOM-killed" and not proof["survived"], proof
            assert proof["limit_bytes"] == 200 * MIB and proof["oom_kills"] >= 1, proof
            assert proof["limit_hits"] >= 1 and proof["slowdown"] > 0, proof
            assert proof["caches"].startswith("cold"), proof
            assert "OOM-killed" in sub["reason"] and sub["reason"].startswith("OVER BUDGET"), sub
            rss = rss_result(c, sub_id)
            assert rss["status"] == "fail" and rss["note"] == proof["note"], rss
        if survives is not None:
            sub = finished(c, survives)
            assert (sub["status"], sub["verdict"]) == ("done", "pass"), sub
            proof = sub["proof"]
            assert proof["made"] and proof["outcome"] == "survived" and proof["survived"], proof
            assert proof["limit_hits"] == 0 and proof["oom_kills"] == 0 and proof["exit_code"] == 0, proof
            assert "survived" in sub["reason"], sub
            rss = rss_result(c, survives)
            assert rss["status"] == "pass" and "proof under 200 MiB, cold: survived" in rss["note"], rss
        # the submission's page shows the proof (the session cookie is the token)
        page = ui_page(server, f"/ui/submissions/{killed['child']}")
        outcome = re.search(r'id="proof-outcome">([^<]*)<', page.text)
        assert outcome is not None and outcome.group(1) == "OOM-killed", page.text
        assert re.search(r'id="proof-hits">[1-9]', page.text), page.text


def test_prove_needs_an_rss_limit_and_stays_off_by_default(server: Server) -> None:
    with server.client() as c:
        r = put_policy(c, "no-rss", "wall=60s", True)
        assert r.status_code == 422 and "prove" in r.json()["detail"], r.text
        r = c.put(f"{API}/policies/plain", json={"budget": BUDGET})
        assert r.status_code == 201 and r.json()["prove"] is False, r.text


def test_a_policy_says_which_limits_are_lower_bounds(server: Server) -> None:
    with server.client() as c:
        r = c.put(f"{API}/policies/throughput", json={"budget": "samples_per_s>=400 wall=60s"})
        assert r.status_code == 201, r.text
        limits = {limit["key"]: limit for limit in c.get(f"{API}/policies/throughput").json()["limits"]}
        assert limits["samples_per_s"]["lower"] is True and limits["samples_per_s"]["value"] == 400
        assert limits["wall"]["lower"] is False


def test_a_proof_the_host_cannot_enforce_is_never_a_pass() -> None:
    """Where the sandbox holds the proof by its watchdog only (no memory cgroup: not this host),
    the verdict is an error that says so in one line, whatever the run did."""
    from memgauge.service._proof import proved_values
    from memgauge.sweep import JobResult

    watchdog = "200 MiB: watchdog only, every 0.02 s (no cgroup limit: no memory controller)"
    record = {"applied": {"memory": watchdog}, "not_applied": {}, "hit": {}}
    values = {"verdict": "pass", "reason": "within budget", "verdict_json": "{}"}
    base = JobResult("s", {}, None, 0, sandbox=record)
    proof = JobResult("s-proof", {}, None, 0, sandbox=record)
    out = proved_values(values, base, proof, 200 * MIB, "cold")
    assert out["verdict"] == "error" and "\n" not in out["reason"], out
    assert "cannot enforce a memory limit" in out["reason"] and "watchdog only" in out["reason"], out
    stored = json.loads(out["proof"])
    assert stored["made"] is False and stored["note"] == out["reason"], stored


def test_the_policies_page_sets_and_shows_prove(server: Server) -> None:
    """The form's Prove box saves ``prove`` (a budget without rss is refused with the rule), and the
    list says which policies prove."""
    with httpx.Client(base_url=server.url, cookies={"memgauge_token": server.admin}) as ui:
        page = ui.get("/ui/policies")
        csrf = re.search(r'name="csrf" value="([0-9a-f]{64})"', page.text)
        assert csrf is not None and 'id="p-prove"' in page.text
        form = {"csrf": csrf.group(1), "name": "form-proves", "budget": BUDGET, "prove": "on"}
        assert ui.post("/ui/policies", data=form).status_code == 303
        refused = ui.post("/ui/policies", data={**form, "name": "form-no-rss", "budget": "wall=9s"})
        assert refused.status_code == 422 and "prove: a proof runs" in refused.text, refused.text
        form = {**form, "name": "form-plain"}
        del form["prove"]
        assert ui.post("/ui/policies", data=form).status_code == 303
        page = ui.get("/ui/policies")
    with server.client() as c:
        assert c.get(f"{API}/policies/form-proves").json()["prove"] is True
        assert c.get(f"{API}/policies/form-plain").json()["prove"] is False
        assert c.get(f"{API}/policies/form-no-rss").status_code == 404
    rows = {
        name: page.text.split(f'data-name="{name}"', 1)[1].split("</tr>", 1)[0]
        for name in ("form-proves", "form-plain")
    }
    assert "a pass is proved under the rss limit" in rows["form-proves"], rows
    assert "a pass is proved" not in rows["form-plain"], rows
