"""The machines' page of the service's web UI in real headless Chromium against a real ``memgauge
serve`` with real sandboxed runs: each machine's fill (the admitted shares against its memory),
making a machine, a policy naming it, a submission's admission, and releasing a share.

Without Chromium or Playwright these tests skip, unless MEMGAUGE_REQUIRE_BROWSER=1 (CI sets it).
MEMGAUGE_UPDATE_SCREENSHOTS=1 rewrites docs/service-machines.png."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from memgauge._units import format_bytes
from tests.integration.test_service_ui_browser import API, open_tab, screenshot, submit, wait_for
from tests.service_server import Server, admin_token


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    started = Server(tmp_path_factory.mktemp("ui-machines") / "data", None, admin_token())
    started.start()
    try:
        yield started
    finally:
        started.stop()


def test_machines_page_shows_the_fill_and_releases_a_share(browser: Any, server: Server) -> None:
    tab = open_tab(browser, server, server.admin)
    page = tab.page
    page.goto("/ui/machines")
    assert "No machines yet" in page.inner_text("main")
    page.fill("#m-name", "edge-1")
    page.fill("#m-memory", "512")  # no unit: refused, the form kept
    page.fill("#m-cores", "2")
    page.click("#machine-save")
    assert "memory: a size with its unit" in page.inner_text("#form-error")
    assert page.input_value("#m-name") == "edge-1"
    page.fill("#m-memory", "512MiB")
    page.click("#machine-save")
    page.wait_for_url("**/ui/machines?saved=edge-1")

    page.goto("/ui/policies")
    page.fill("#p-name", "fleet")
    page.fill("#p-budget", "rss=400MiB wall=60s")
    page.select_option("#p-machine", "edge-1")
    page.click("#policy-save")
    page.wait_for_url("**/ui/policies?saved=fleet")
    assert "admitted to edge-1 by worst" in page.inner_text("#policies tr[data-name='fleet']")

    with server.client() as c:
        sub = wait_for(c, submit(c, "service_hold.py", "fleet", "64", "0.3"))
    assert sub["verdict"] == "pass" and sub["admission"]["admitted"], sub
    share = sub["admission"]["share_bytes"]

    page.goto("/ui/machines")
    section = page.locator("#machine-edge-1")
    figures = section.locator(".fill-figures").inner_text()
    assert f"{format_bytes(share)} held of {format_bytes(512 << 20)}" in figures
    assert f"{format_bytes((512 << 20) - share)} free" in figures
    rects = section.locator("svg.fill rect.share")
    assert rects.count() == 1
    # the bar is drawn to scale: the share's width against the machine's mark
    width = int(rects.first.get_attribute("width") or 0)
    limit = int(section.locator("svg.fill line.fill-limit").get_attribute("x1") or 0)
    assert limit == 1000 and width == round(1000 * share / (512 << 20))
    box = section.locator("svg.fill").bounding_box()
    assert box is not None and box["width"] > 300
    screenshot(page, "service-machines.png")

    page.goto(f"/ui/submissions/{sub['id']}")
    note = page.inner_text("#admission-note")
    assert re.search(r"admitted to\s+edge-1 by worst", note), note
    assert page.inner_text("#admission-held") == "yes"

    page.goto("/ui/machines")
    section.locator("button.release").click()
    page.wait_for_url("**/ui/machines")
    assert tab.dialogs == ["Release this submission's share of edge-1?"]
    assert page.locator("#machine-edge-1 svg.fill rect.share").count() == 0
    assert "0 B held" in page.locator("#machine-edge-1 .fill-figures").inner_text()
    with server.client() as c:
        assert c.get(f"{API}/submissions/{sub['id']}").json()["admission"]["held"] is False

    # a machine a policy names is not deleted: the page says why
    page.locator("#machine-edge-1 .title-row button.danger").click()
    assert "named by policies fleet" in page.inner_text("#page-error")
    tab.clean(409, 422)
    tab.context.close()
