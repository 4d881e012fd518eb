"""A limit the host could not measure never passes unless allowed, in child processes: ``memgauge
check`` exits 3 (``--allow-unmeasured``: 0), the pytest plugin fails the test (allowed by option,
ini or marker), and the service's verdict is ``unmeasured`` (``memgauge submit`` exits 3) unless
the policy allows it. The limit is a ``gpu`` one: no GPU is used by these programs, so none of
them has a GPU figure (ground truth by construction)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

SCRIPT = "x = bytearray(8 << 20)\nprint('done')\n"


def memgauge(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MEMGAUGE_TOKEN", "MEMGAUGE_SERVER")}
    return subprocess.run(
        [sys.executable, "-m", "memgauge", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
    )


def test_check_exits_3_on_an_unmeasured_limit_and_0_when_allowed(tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    plain = memgauge("check", "--budget", "rss=1GiB gpu=1MiB", str(script), cwd=tmp_path)
    assert plain.returncode == 3, plain
    assert plain.stdout == "done\n"  # the program's own output, untouched
    assert "gpu" in plain.stderr and "unmeasured" in plain.stderr
    assert "NOT JUDGED: 1 of 2 limits could not be measured" in plain.stderr
    allowed = memgauge(
        "check", "--budget", "rss=1GiB gpu=1MiB", "--allow-unmeasured", str(script), cwd=tmp_path
    )
    assert allowed.returncode == 0, allowed
    assert "within budget (1 not measured, allowed)" in allowed.stderr
    # a breach beside it is still a breach (1), and the JSON says what was not measured
    out = tmp_path / "verdict.json"
    over = memgauge(
        "check",
        "--budget",
        "rss=1MiB gpu=1MiB",
        "--format",
        "json",
        "-o",
        str(out),
        str(script),
        cwd=tmp_path,
    )
    assert over.returncode == 1, over
    data = json.loads(out.read_text())
    assert (data["ok"], data["failed"], data["unmeasured"], data["allow_unmeasured"]) == (False, 1, 1, False)


def test_check_on_a_saved_profile_with_a_phase_that_never_ran(tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    saved = tmp_path / "run.json"
    ran = memgauge("run", "--json", str(saved), str(script), cwd=tmp_path)
    assert ran.returncode == 0, ran
    unjudged = memgauge("check", "--budget", "rss=1GiB eval.rss=1GiB", str(saved), cwd=tmp_path)
    assert unjudged.returncode == 3, unjudged
    assert "phase 'eval' did not run" in unjudged.stdout
    ok = memgauge("check", "--budget", "rss=1GiB", str(saved), cwd=tmp_path)
    assert ok.returncode == 0, ok


def test_the_pytest_plugin_fails_a_test_whose_limit_was_not_measured(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_budgets="""
        import pytest

        @pytest.mark.memory_budget(rss="1GiB", gpu="1MiB")
        def test_unmeasured():
            x = bytearray(1 << 20)

        @pytest.mark.memory_budget(rss="1GiB", gpu="1MiB", allow_unmeasured=True)
        def test_allowed_by_its_marker():
            x = bytearray(1 << 20)

        @pytest.mark.memory_budget(rss="1GiB")
        def test_measured():
            x = bytearray(1 << 20)
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--memgauge-json", "out.json")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*budget not measured: gpu (no GPU figure*--memgauge-allow-unmeasured*"])
    records = {
        r["nodeid"].split("::")[1]: r["status"]
        for r in json.loads((pytester.path / "out.json").read_text())["tests"]
    }
    assert records == {
        "test_unmeasured": "unmeasured",
        "test_allowed_by_its_marker": "pass",
        "test_measured": "pass",
    }
    allowed = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--memgauge-allow-unmeasured")
    allowed.assert_outcomes(passed=3)
    pytester.makeini("[pytest]\nmemgauge_allow_unmeasured = true\n")
    by_ini = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    by_ini.assert_outcomes(passed=3)


ROOT = sys.platform == "linux" and os.geteuid() == 0


@pytest.mark.skipif(not ROOT, reason="the service's sandbox needs root")
def test_the_service_verdict_is_unmeasured_unless_the_policy_allows_it(tmp_path: Path) -> None:
    pytest.importorskip("uvicorn")
    from tests.service_server import Server, admin_token

    server = Server(tmp_path / "data", None, admin_token()).start()
    try:
        with server.client() as c:
            r = c.put("/api/v1/policies/strict", json={"budget": "rss=1GiB gpu=1MiB"})
            assert r.status_code == 201 and r.json()["allow_unmeasured"] is False, r.text
        admin = ["--server", server.url, "--token", server.admin]
        made = memgauge(
            "policy", "set", "lenient", "rss=1GiB gpu=1MiB", "--allow-unmeasured", *admin, cwd=tmp_path
        )
        assert made.returncode == 0, made
        listed = memgauge("policy", "list", *admin, cwd=tmp_path)
        assert "lenient\trss=1GiB gpu=1MiB (unmeasured limits allowed)" in listed.stdout, listed
        assert "strict\trss=1GiB gpu=1MiB\n" in listed.stdout, listed
        script = tmp_path / "job.py"
        script.write_text(SCRIPT)
        common = ["--server", server.url, "--token", server.admin]
        strict = memgauge("submit", str(script), "--policy", "strict", *common, cwd=tmp_path)
        assert strict.returncode == 3, strict
        assert "UNMEASURED: not judged: could not measure gpu" in strict.stderr
        lenient = memgauge("submit", str(script), "--policy", "lenient", *common, cwd=tmp_path)
        assert lenient.returncode == 0, lenient
        assert "PASS: within budget (1 not measured, allowed)" in lenient.stderr
        with server.client() as c:
            items = c.get("/api/v1/submissions").json()["items"]
        assert sorted((i["policy"], i["verdict"], i["allow_unmeasured"]) for i in items) == [
            ("lenient", "pass", True),
            ("strict", "unmeasured", False),
        ]
    finally:
        server.stop()
