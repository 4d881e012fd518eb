"""The service's web UI in real headless Chromium (Debian's, driven by Playwright) against a real
``memgauge serve`` with real sandboxed runs: signing in, the submissions list and its badges, a
submission's page with its report framed, policies, tokens, cancelling, CSRF, signing out, and
hostile strings that must stay text.

Without Chromium or Playwright these tests skip, unless MEMGAUGE_REQUIRE_BROWSER=1 (CI sets it).
MEMGAUGE_UPDATE_SCREENSHOTS=1 rewrites docs/service-ui.png and docs/service-submission.png.
"""

from __future__ import annotations

import io
import json
import os
import re
import sqlite3
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

import httpx

from memgauge._units import format_bytes, format_seconds
from tests.conftest import PROGRAMS
from tests.service_server import Server, admin_token

API = "/api/v1"
DOCS = Path(__file__).parents[2] / "docs"
FINISHED = ("done", "failed", "cancelled")
HOSTILE = "\"'><img src=x onerror=alert(1)><script>alert(2)</script>"
UPDATE_SCREENSHOTS = os.environ.get("MEMGAUGE_UPDATE_SCREENSHOTS") == "1"


@dataclass
class Jobs:
    server: Server
    passed: dict[str, Any]
    failed: dict[str, Any]
    crashed: dict[str, Any]


def submit(client: httpx.Client, program: str, policy: str, *args: str, name: str | None = None) -> str:
    path = PROGRAMS / program
    r = client.post(
        f"{API}/submissions",
        files={"file": (name or path.name, path.read_bytes())},
        data={"policy": policy, "args": json.dumps(list(args))},
    )
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def wait_for(client: httpx.Client, sub_id: str, states: tuple[str, ...] = FINISHED) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        sub: dict[str, Any] = client.get(f"{API}/submissions/{sub_id}").json()
        if sub["status"] in states:
            return sub
        time.sleep(0.1)
    raise AssertionError(f"submission {sub_id} is still {sub['status']}")


@pytest.fixture(scope="module")
def jobs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Jobs]:
    """One server for the module (two workers), with a passing, an over-budget and a crashing run."""
    server = Server(tmp_path_factory.mktemp("ui") / "data", None, admin_token(), extra=["--workers", "2"])
    server.start()
    try:
        with server.client() as c:
            for name, budget in (("roomy", "rss=512MiB wall=60s"), ("tight", "rss=100MiB wall=60s")):
                assert c.put(f"{API}/policies/{name}", json={"budget": budget}).status_code == 201
            ids = [
                submit(c, "service_hold.py", "roomy", "20", "0.2"),
                submit(c, "service_hold.py", "tight", "300", "2"),
                submit(c, "service_crash.py", "roomy", "exit", "3"),
            ]
            subs = [wait_for(c, i) for i in ids]
        yield Jobs(server, *subs)
    finally:
        server.stop()


@dataclass
class Tab:
    """A signed-in browser context and its page, with everything the page logged."""

    context: Any
    page: Any
    console: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def clean(self, *expected: int) -> None:
        """No console error (a CSP violation, an inline style or script that slipped in, is one)
        but the failed loads of the ``expected`` statuses."""
        allowed = tuple(f"the server responded with a status of {s} " for s in expected)
        errors = [m for kind, m in self.console if kind == "error" and not any(a in m for a in allowed)]
        assert errors == []
        assert self.errors == []


def open_tab(browser: Any, server: Server, token: str | None = None) -> Tab:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=server.url)
    page = context.new_page()
    tab = Tab(context, page)
    page.on("console", lambda m: tab.console.append((m.type, m.text)))
    page.on("pageerror", lambda e: tab.errors.append(str(e)))

    def dialog(d: Any) -> None:
        tab.dialogs.append(d.message)
        # the UI's own confirmations are accepted; anything else would be an injected script's
        d.accept() if d.type == "confirm" else d.dismiss()

    page.on("dialog", dialog)
    if token is not None:
        page.goto("/login")
        page.fill("#token", token)
        page.click("form[action='/login'] button[type=submit]")
        page.wait_for_url("**/ui/submissions")
    return tab


@pytest.fixture
def admin_tab(browser: Any, jobs: Jobs) -> Iterator[Tab]:
    tab = open_tab(browser, jobs.server, jobs.server.admin)
    yield tab
    tab.context.close()


def make_token(server: Server, name: str, role: str = "submitter") -> str:
    with server.client() as c:
        r = c.post(f"{API}/tokens", json={"name": name, "role": role})
        assert r.status_code == 201, r.text
        return str(r.json()["token"])


def screenshot(page: Any, name: str, *, full_page: bool = False) -> None:
    """With MEMGAUGE_UPDATE_SCREENSHOTS=1: the page, 1280 px wide; ``full_page``: all of it, by a
    window as tall as the page (Chromium's own full-page capture leaves the report's frame blank)."""
    if not UPDATE_SCREENSHOTS:
        return
    size = page.viewport_size
    if full_page:
        height = page.evaluate("document.documentElement.scrollHeight")
        page.set_viewport_size({"width": size["width"], "height": height})
        page.wait_for_timeout(500)  # the frame's charts redraw for the new size
    page.screenshot(path=str(DOCS / name))
    page.set_viewport_size(size)


# -- tests -----------------------------------------------------------------------------------------


def test_login_form_sets_the_cookie_for_a_valid_token_only(browser: Any, jobs: Jobs) -> None:
    tab = open_tab(browser, jobs.server)
    page = tab.page
    response = page.goto("/")
    assert page.url.endswith("/login") and response.status == 200
    page.goto("/ui/policies")
    assert "/login?next=%2Fui%2Fpolicies" in page.url

    page.fill("#token", "mg_" + "x" * 43)
    with page.expect_response(lambda r: r.request.method == "POST") as answer:
        page.click("form[action='/login'] button[type=submit]")
    assert answer.value.status == 401
    assert "not valid" in page.inner_text("#login-error")
    assert tab.context.cookies() == []

    page.fill("#token", jobs.server.admin)
    page.click("form[action='/login'] button[type=submit]")
    page.wait_for_url("**/ui/policies")  # back where it was going
    (cookie,) = tab.context.cookies()
    assert cookie["name"] == "memgauge_token" and cookie["value"] == jobs.server.admin
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and not cookie["secure"]
    assert page.evaluate("document.cookie") == ""  # no script can read it
    page.goto("/")
    assert page.url.endswith("/ui/submissions")
    tab.clean(401)
    tab.context.close()


def test_submissions_list_shows_badges_figures_and_filters(admin_tab: Tab, jobs: Jobs) -> None:
    page = admin_tab.page
    page.goto("/ui/submissions")
    rows = page.locator("#submissions tbody tr")
    assert rows.count() == 3
    # newest first: the crash was submitted last
    assert [rows.nth(i).get_attribute("data-id") for i in range(3)] == [
        jobs.crashed["id"],
        jobs.failed["id"],
        jobs.passed["id"],
    ]
    colours = {}
    for sub, verdict in ((jobs.passed, "pass"), (jobs.failed, "fail"), (jobs.crashed, "error")):
        assert sub["verdict"] == verdict, sub
        row = page.locator(f"#submissions tr[data-id='{sub['id']}']")
        badge = row.locator(".badge")
        assert badge.inner_text().lower() == verdict
        colours[verdict] = badge.evaluate("b => getComputedStyle(b).color")
        cells = row.locator("td")
        text = row.inner_text()
        assert sub["policy"] in text and "service_" in cells.nth(1).inner_text()
        if sub["peak_rss_bytes"] is not None:
            assert format_bytes(sub["peak_rss_bytes"]) in cells.nth(3).inner_text()
            assert format_seconds(sub["wall_seconds"]) in cells.nth(4).inner_text()
        assert "admin" in cells.nth(6).inner_text()  # the owner, for an admin
    assert colours == {"pass": "rgb(21, 128, 61)", "fail": "rgb(185, 28, 28)", "error": "rgb(146, 64, 14)"}
    screenshot(page, "service-ui.png")

    # the filters are the API's query parameters, set through the form
    page.select_option("select[name=verdict]", "fail")
    page.click("#filters button[type=submit]")
    page.wait_for_url("**verdict=fail**")
    assert page.locator("#submissions tbody tr").count() == 1
    page.goto("/ui/submissions?policy=roomy&status=done&verdict=error")
    assert page.locator("#submissions tbody tr").get_attribute("data-id") == jobs.crashed["id"]
    # paging: one a page, next and previous links keep the filters
    page.goto("/ui/submissions?limit=1&policy=roomy")
    assert page.inner_text("#count") == "1\u20131 of 2"
    page.click("#next")
    assert page.locator("#submissions tbody tr").get_attribute("data-id") == jobs.passed["id"]
    assert "policy=roomy" in page.url and page.locator("#next").count() == 0
    page.click("#prev")
    assert page.locator("#submissions tbody tr").get_attribute("data-id") == jobs.crashed["id"]
    page.goto("/ui/submissions?status=bogus")
    assert "status: one of" in page.inner_text("#error-message")
    admin_tab.clean(400)


def test_submission_page_frames_the_report(admin_tab: Tab, jobs: Jobs) -> None:
    page = admin_tab.page
    sub = jobs.passed
    page.goto("/ui/submissions")
    page.click(f"#submissions tr[data-id='{sub['id']}'] td.file a")
    page.wait_for_url(f"**/ui/submissions/{sub['id']}")
    assert page.inner_text("#verdict").strip().lower() == "pass"
    assert page.inner_text("#reason") == sub["reason"]
    assert page.inner_text("#peak") == format_bytes(sub["peak_rss_bytes"])
    assert page.inner_text("#exit-code") == "0"
    assert "rss=512MiB" in page.inner_text("#policy")
    assert "HELD 20 MiB" in page.inner_text("#output-tail")
    # which pieces of the sandbox held depends on the host (root, cgroups): each says how, or why not
    memory = page.locator("#sandbox tr[data-piece=memory]")
    if memory.locator(".c-pass").count():
        assert "512 MiB" in memory.locator("td.detail").inner_text()
    else:
        assert memory.locator("td.detail").inner_text().strip()
    assert page.locator("#cancel").count() == 0  # finished: nothing to cancel

    frame_el = page.locator("#report-frame")
    assert frame_el.get_attribute("sandbox") == "allow-scripts"
    assert frame_el.get_attribute("src") == f"/ui/submissions/{sub['id']}/report"
    frame = page.frame_locator("#report-frame")
    frame.locator("body[data-rendered]").wait_for(state="attached", timeout=15_000)
    assert format_bytes(sub["peak_rss_bytes"]) in frame.locator("#summary").inner_text()
    painted = frame.locator("canvas").first.evaluate(
        """c => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                  let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n; }"""
    )
    assert painted > 1000  # a chart drawn, in the sandboxed frame
    screenshot(page, "service-submission.png", full_page=True)

    # the report full-page: its own policy, framed by this origin only, sandboxed
    r = page.request.get(f"/ui/submissions/{sub['id']}/report")
    assert r.status == 200 and r.headers["x-frame-options"] == "SAMEORIGIN"
    assert "frame-ancestors 'self'" in r.headers["content-security-policy"]
    assert "sandbox allow-scripts" in r.headers["content-security-policy"]
    r = page.request.get(f"/ui/submissions/{sub['id']}/profile.json")
    assert r.status == 200 and r.json()["peak"]["needs_bytes"] == sub["peak_rss_bytes"]
    assert "attachment" in r.headers["content-disposition"]

    # over budget: the limit, the sandbox's stop, no report frame needed to tell why
    failed = jobs.failed
    page.goto(f"/ui/submissions/{failed['id']}")
    assert page.inner_text("#verdict").strip().lower() == "fail"
    assert page.inner_text("#reason") == failed["reason"] and "rss" in failed["reason"]
    assert "fail" in page.inner_text("#checks")
    # a foreign or unknown id is a 404 page
    r = page.goto("/ui/submissions/" + "0" * 32)
    assert r.status == 404 and "no submission" in page.inner_text("#error-message")
    admin_tab.clean(404)


def test_policies_page_creates_and_refuses_bad_budgets(admin_tab: Tab, jobs: Jobs, browser: Any) -> None:
    page = admin_tab.page
    page.goto("/ui/policies")
    assert page.locator("#policies tr[data-name=roomy]").count() == 1
    page.fill("#p-name", "medium")
    page.fill("#p-budget", "rss=256M wall=30s")
    with page.expect_response(lambda r: r.request.method == "POST") as answer:
        page.click("#policy-save")
    assert answer.value.status == 422
    error = page.inner_text("#form-error")
    assert "ambiguous unit 'M'" in error and "^^^" in error
    assert page.input_value("#p-budget") == "rss=256M wall=30s"  # kept for fixing
    page.fill("#p-budget", "rss=256MiB wall=30s")
    page.fill("#p-description", "for medium jobs")
    page.click("#policy-save")
    page.wait_for_url("**/ui/policies?saved=medium")
    row = page.locator("#policies tr[data-name=medium]")
    assert "rss ≤ 256 MiB" in row.inner_text() and "for medium jobs" in row.inner_text()
    with jobs.server.client() as c:
        assert c.get(f"{API}/policies/medium").json()["budget"] == "rss=256MiB wall=30s"
    # edit (PUT semantics), then delete
    row.locator("a", has_text="edit").click()
    assert page.input_value("#p-name") == "medium"
    page.fill("#p-budget", "rss=300MiB")
    page.click("#policy-save")
    page.wait_for_url("**saved=medium")
    assert "rss ≤ 300 MiB" in page.locator("#policies tr[data-name=medium]").inner_text()
    page.locator("#policies tr[data-name=medium] button", has_text="delete").click()
    page.wait_for_url("**/ui/policies")
    assert page.locator("#policies tr[data-name=medium]").count() == 0
    assert admin_tab.dialogs == ["Delete the policy medium? Submissions keep the budget they were judged by."]

    # a submitter sees the policies, not the form
    viewer = open_tab(browser, jobs.server, make_token(jobs.server, "viewer"))
    viewer.page.goto("/ui/policies")
    assert viewer.page.locator("#policies tr[data-name=tight]").count() == 1
    assert viewer.page.locator("#policy-form").count() == 0
    assert viewer.page.locator("nav a", has_text="Tokens").count() == 0
    viewer.context.close()
    admin_tab.clean(422)


def test_tokens_page_for_admins_only(admin_tab: Tab, jobs: Jobs, browser: Any) -> None:
    page = admin_tab.page
    page.goto("/ui/tokens")
    page.fill("#t-name", "alice")
    page.select_option("#t-role", "submitter")
    page.click("#token-create")
    secret = page.inner_text("#new-secret")
    assert re.fullmatch(r"mg_[A-Za-z0-9_-]{43}", secret)
    row = page.locator("#tokens tbody tr", has_text="alice")
    assert secret[:9] in row.inner_text() and "submitter" in row.inner_text().lower()
    page.goto("/ui/tokens")
    assert page.locator("#new-secret").count() == 0  # shown once
    assert secret not in page.content()

    # the new submitter: its own submissions only, and no tokens page
    with jobs.server.client(secret) as c:
        own = submit(c, "service_hold.py", "roomy", "5", "0")
        wait_for(c, own)
    alice = open_tab(browser, jobs.server, secret)
    rows = alice.page.locator("#submissions tbody tr")
    assert rows.count() == 1 and rows.first.get_attribute("data-id") == own
    assert alice.page.locator("#submissions th", has_text="owner").count() == 0
    r = alice.page.goto("/ui/tokens")
    assert r.status == 403 and "only an admin" in alice.page.inner_text("#error-message")
    r = alice.page.goto(f"/ui/submissions/{jobs.passed['id']}")
    assert r.status == 404  # another's submission is not there at all
    alice.clean(403, 404)

    # revoking: alice is out at her next page; the last admin token cannot go
    page.goto("/ui/tokens")
    page.locator("#tokens tbody tr", has_text="alice").locator("button", has_text="revoke").click()
    page.wait_for_url("**/ui/tokens")
    assert page.locator("#tokens tr.revoked", has_text="alice").count() == 1
    alice.page.goto("/ui/submissions")
    assert "/login" in alice.page.url
    alice.context.close()
    page.locator("#tokens tbody tr", has_text="(you)").locator("button", has_text="revoke").click()
    assert page.inner_text("#token-error") == "This is the last admin token: make another admin token first."
    admin_tab.clean(409)


def test_cancel_a_running_submission(admin_tab: Tab, jobs: Jobs) -> None:
    with jobs.server.client() as c:
        sub_id = submit(c, "service_sleep.py", "roomy", "30")
        wait_for(c, sub_id, ("running",))
    page = admin_tab.page
    page.goto(f"/ui/submissions/{sub_id}")
    assert page.inner_text("#verdict").strip().lower() == "running"
    assert page.locator("meta[http-equiv=refresh]").count() == 1  # it follows the run
    page.click("#cancel")
    page.wait_for_url(f"**/ui/submissions/{sub_id}")
    with jobs.server.client() as c:
        sub = wait_for(c, sub_id)
    assert sub["status"] == "cancelled"
    page.goto(f"/ui/submissions/{sub_id}")
    assert page.inner_text("#verdict").strip().lower() == "cancelled"
    assert page.locator("#cancel").count() == 0 and page.locator("meta[http-equiv=refresh]").count() == 0
    assert admin_tab.dialogs == ["Cancel this submission?"]
    admin_tab.clean()


def test_forms_need_the_csrf_value(jobs: Jobs) -> None:
    with httpx.Client(base_url=jobs.server.url, follow_redirects=False, timeout=30) as ui:
        assert ui.post("/login", data={"token": jobs.server.admin}).status_code == 303
        page = ui.get("/ui/policies")
        csrf = re.search(r'name="csrf" value="([0-9a-f]{64})"', page.text)
        assert csrf is not None
        form = {"name": "csrf-test", "budget": "rss=1GiB"}
        refused = [
            ui.post("/ui/policies", data=form),
            ui.post("/ui/policies", data={**form, "csrf": "0" * 64}),
            ui.post("/ui/policies", data={**form, "csrf": csrf[1]}, headers={"Sec-Fetch-Site": "cross-site"}),
            ui.post("/ui/tokens/1/revoke", data={}),
            ui.post("/logout", data={}),
        ]
        assert [r.status_code for r in refused] == [403] * 5
        assert "CSRF" in refused[0].text
        with jobs.server.client() as api:
            assert api.get(f"{API}/policies/csrf-test").status_code == 404
        assert ui.post("/ui/policies", data={**form, "csrf": csrf[1]}).status_code == 303
        # another session's value is not this one's
        other = make_token(jobs.server, "other")
        with httpx.Client(base_url=jobs.server.url, follow_redirects=False) as second:
            second.post("/login", data={"token": other})
            assert second.post("/logout", data={"csrf": csrf[1]}).status_code == 403
        assert ui.post("/ui/policies/csrf-test/delete", data={"csrf": csrf[1]}).status_code == 303
        # the headers every page carries
        headers = ui.get("/ui/submissions").headers
        assert headers["x-frame-options"] == "DENY" and headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "no-referrer"
        assert "default-src 'self'" in headers["content-security-policy"]
        assert "unsafe-inline" not in headers["content-security-policy"]


def test_hostile_strings_stay_text(browser: Any, jobs: Jobs) -> None:
    token = make_token(jobs.server, HOSTILE)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("main.py", f"print({HOSTILE!r})\n")
    with jobs.server.client(token) as c:
        r = c.post(
            f"{API}/submissions",
            files={"file": (HOSTILE + ".zip", archive.getvalue())},
            data={"policy": "roomy"},
        )
        assert r.status_code == 201, r.text
        sub_id, filename = r.json()["id"], r.json()["filename"]
        assert "<img src=x onerror=alert(1)><script>" in filename  # multipart sends '"' as %22
        wait_for(c, sub_id)
    # the reason is the server's own words; make it hostile as well
    with sqlite3.connect(jobs.server.data_dir / "memgauge.db") as db:
        db.execute("UPDATE submissions SET reason = ? WHERE id = ?", (HOSTILE, sub_id))

    tab = open_tab(browser, jobs.server, token)
    page = tab.page
    assert page.inner_text(".who .me").startswith(HOSTILE)
    assert page.inner_text("#submissions td.file a") == filename
    page.click("#submissions td.file a")
    page.wait_for_url(f"**/{sub_id}")
    assert page.inner_text("#filename") == filename
    assert page.inner_text("#reason") == HOSTILE
    assert HOSTILE in page.inner_text("#output-tail")
    page.frame_locator("#report-frame").locator("body[data-rendered]").wait_for(state="attached")
    assert page.locator("main img, main script").count() == 0
    assert tab.dialogs == [] and tab.errors == []
    tab.context.close()
    # the admin's list shows the owner's name as text too
    admin = open_tab(browser, jobs.server, jobs.server.admin)
    assert HOSTILE in admin.page.locator(f"#submissions tr[data-id='{sub_id}']").inner_text()
    assert admin.page.locator("main img").count() == 0 and admin.dialogs == []
    admin.context.close()


def test_logout_ends_the_session(admin_tab: Tab) -> None:
    page = admin_tab.page
    page.click("#logout")
    page.wait_for_url("**/login")
    assert admin_tab.context.cookies() == []
    page.goto("/ui/submissions")
    assert "/login" in page.url
    admin_tab.clean()
