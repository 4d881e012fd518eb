"""The pytest plugin (``memgauge.pytest_plugin``, enabled by installing memgauge): budgets per test.

Every inner session runs with ``runpytest_subprocess``, a real pytest process of its own: memory is
measured in the process that runs the tests, which must not be this one.
"""

from __future__ import annotations

import json
import re
import sys

import pytest

pytest_plugins = ["pytester"]

SIZE = r"([\d.]+) (B|KiB|MiB|GiB)"


def line_of(pytester: pytest.Pytester, filename: str, tag: str) -> int:
    for n, text in enumerate((pytester.path / filename).read_text().splitlines(), 1):
        if f"# LINE: {tag}" in text:
            return n
    raise AssertionError(f"no '# LINE: {tag}' in {filename}")


def section(output: str, test: str) -> str:
    """The failure section of ``test`` in pytest's output."""
    match = re.search(rf"_{{3,}} {re.escape(test)} _{{3,}}\n(.*?)(?=\n_{{3,}} |\n={{3,}} )", output, re.S)
    assert match is not None, f"no failure section for {test}:\n{output}"
    return match.group(1)


def mib(text: str, pattern: str) -> float:
    """The size the first two groups of ``pattern`` match in ``text`` (number, unit), in MiB."""
    match = re.search(pattern, text)
    assert match is not None, f"{pattern!r} not in:\n{text}"
    factor = {"B": 1 / (1 << 20), "KiB": 1 / 1024, "MiB": 1, "GiB": 1024}[match.group(2)]
    return float(match.group(1)) * factor


def test_passing_and_failing_budgets(pytester: pytest.Pytester) -> None:
    # numpy: it writes the pages with the GIL released, so the sampler sees the line while it
    # grows (`b"x" * n` keeps the GIL, and its growth can go to the next line: docs/measurement.md)
    pytester.makepyfile(
        test_budgets="""
        import time
        import numpy as np
        import pytest
        import memgauge

        MIB = 1 << 20

        @pytest.mark.memory_budget(rss="100MiB", wall="5s")
        def test_within():
            x = b"x" * (20 * MIB)
            time.sleep(0.05)
            del x

        @pytest.mark.memory_budget(rss="100MiB")
        def test_over():
            x = np.ones(300 * MIB, dtype=np.uint8)  # LINE: alloc
            time.sleep(0.15)
            del x

        @pytest.mark.memory_budget(rss="100MiB")
        def test_fails_on_its_own():
            x = b"x" * (300 * MIB)
            time.sleep(0.1)
            assert len(x) == 0, "the test's own failure"

        @pytest.mark.memory_budget(wall="100ms")
        def test_too_slow():
            time.sleep(0.3)  # LINE: sleep

        @pytest.mark.memory_budget("fit.rss=100MiB load.rss=100MiB")
        def test_phase_over():
            with memgauge.phase("load"):
                small = np.ones(10 * MIB, dtype=np.uint8)
            with memgauge.phase("fit"):
                big = np.ones(200 * MIB, dtype=np.uint8)  # LINE: fit
                time.sleep(0.1)
            del small, big
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=4)
    out = result.stdout.str()

    over = section(out, "test_over")
    alloc = line_of(pytester, "test_budgets.py", "alloc")
    assert "memory budget exceeded: rss " in over
    measured = mib(over, rf"rss {SIZE} > 100 MiB")
    assert 250 <= measured <= 400, over
    assert re.search(
        rf"> 100 MiB \(over by {SIZE}\) at test_budgets\.py:{alloc} 'x = np\.ones\(300 \* MIB", over
    ), over
    assert "rss is the test's growth" in over

    # the test's own failure stands, the breach is told beside it
    own = section(out, "test_fails_on_its_own")
    assert "AssertionError: the test's own failure" in own
    assert "memgauge budget" in own and "memory budget exceeded: rss" in own

    slow = section(out, "test_too_slow")
    sleep = line_of(pytester, "test_budgets.py", "sleep")
    assert re.search(
        rf"time budget exceeded: wall \d+ ms > 100 ms \(over by \d+ ms\) at test_budgets\.py:{sleep}", slow
    )

    # a phase's peak is counted from the test's start too; the phase within its limit passes
    phase = section(out, "test_phase_over")
    assert 190 <= mib(phase, rf"memory budget exceeded: fit\.rss {SIZE} > 100 MiB") <= 260, phase
    assert f"at test_budgets.py:{line_of(pytester, 'test_budgets.py', 'fit')} 'big = np.ones(" in phase
    assert "load.rss" not in phase

    # the summary lists every budgeted test with its growth
    summary = out[out.index("memgauge: budgeted tests") :]
    for name in ("test_within", "test_over", "test_fails_on_its_own", "test_too_slow"):
        assert f"test_budgets.py::{name}" in summary
    assert re.search(r"PASS\s+test_budgets\.py::test_within", summary)
    assert mib(summary, rf"{SIZE}\s+\S+ \S+\s+\S+ \S+\s+PASS\s+test_budgets\.py::test_within") < 40


def test_each_test_is_measured_from_its_own_start(pytester: pytest.Pytester) -> None:
    # the first test leaves 400 MiB resident: they are not the second test's
    pytester.makepyfile(
        test_isolation="""
        import time
        import pytest

        MIB = 1 << 20
        KEEP = []

        def test_keeps_400_mib():
            KEEP.append(b"k" * (400 * MIB))

        @pytest.mark.memory_budget(rss="150MiB")
        def test_next():
            x = b"y" * (50 * MIB)
            time.sleep(0.05)
            del x
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--memgauge-json", "out.json")
    result.assert_outcomes(passed=2)
    (record,) = json.loads((pytester.path / "out.json").read_text())["tests"]
    assert record["nodeid"] == "test_isolation.py::test_next" and record["status"] == "pass"
    assert 45 << 20 <= record["rss_bytes"] <= 80 << 20
    assert record["start_bytes"] >= 400 << 20
    assert record["tree_peak_bytes"] - record["start_bytes"] == record["rss_bytes"]


def test_child_processes_count(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_child="""
        import subprocess
        import sys
        import pytest

        @pytest.mark.memory_budget("rss=100MiB")
        def test_child():
            code = "x = b'x' * (300 << 20); import time; time.sleep(0.3)"
            subprocess.run([sys.executable, "-c", code], check=True)  # LINE: child
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    text = section(result.stdout.str(), "test_child")
    assert mib(text, rf"rss {SIZE} > 100 MiB") >= 250, text
    assert f"at test_child.py:{line_of(pytester, 'test_child.py', 'child')} 'subprocess.run(" in text
    assert re.search(r"\(process \d+\)", text)


DEFAULTS = """
import time
import pytest

MIB = 1 << 20

def hold(n):
    x = b"x" * (n * MIB)
    time.sleep(0.1)
    del x

def test_plain():
    hold(300)

@pytest.mark.memory_budget(rss="500MiB")
def test_raised():
    hold(300)

@pytest.mark.memory_budget(None)
def test_out_of_it():
    hold(300)

@pytest.mark.memory_budget(rss=None, wall="10s")
def test_rss_dropped():
    hold(300)

def test_small():
    hold(10)
"""


def test_default_budget_from_ini_with_overrides_and_opt_outs(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_defaults=DEFAULTS)
    pytester.makeini("[pytest]\nmemgauge_budget = rss=100MiB\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--memgauge-json", "out.json")
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(["*FAILED test_defaults.py::test_plain - memory budget exceeded: rss*"])
    records = {
        r["nodeid"].split("::")[1]: r for r in json.loads((pytester.path / "out.json").read_text())["tests"]
    }
    # memory_budget(None): not measured at all
    assert sorted(records) == ["test_plain", "test_raised", "test_rss_dropped", "test_small"]
    assert (
        records["test_raised"]["limits"] == {"rss": 500 << 20} and records["test_raised"]["status"] == "pass"
    )
    assert records["test_rss_dropped"]["limits"] == {"wall": 10.0}
    assert records["test_small"]["limits"] == {"rss": 100 << 20}


def test_command_line_budget_over_the_ini(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_defaults=DEFAULTS)
    pytester.makeini("[pytest]\nmemgauge_budget = rss=1GiB\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--memgauge-budget", "rss=100MiB")
    result.assert_outcomes(passed=4, failed=1)
    assert "memory budget exceeded: rss" in section(result.stdout.str(), "test_plain")
    assert "> 100 MiB (over by" in section(result.stdout.str(), "test_plain")
    # the ini's alone: everything within 1 GiB
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=5)


def test_json_holds_every_budgeted_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_json="""
        import time
        import numpy as np
        import pytest

        MIB = 1 << 20

        @pytest.mark.memory_budget(rss="100MiB", wall="30s", cpu="5s")
        def test_over():
            x = np.ones(200 * MIB, dtype=np.uint8)  # LINE: alloc
            time.sleep(0.1)
            del x
            # 0.3 s of this thread's CPU time, however busy the machine is
            start = time.thread_time()
            while time.thread_time() - start < 0.3:
                pass

        def test_unbudgeted():
            pass
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--memgauge-json", "reports/out.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*memgauge: cannot write --memgauge-json to *reports/out.json: no directory*"]
    )

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--memgauge-json", "out.json")
    result.assert_outcomes(passed=1, failed=1)
    data = json.loads((pytester.path / "out.json").read_text())
    assert "growth" in data["rss"]
    (record,) = data["tests"]
    assert record["nodeid"] == "test_json.py::test_over" and record["status"] == "fail"
    assert 180 << 20 <= record["rss_bytes"] <= 260 << 20
    # the call's CPU: the 0.3 s burnt, the allocation's page faults and the samplers, not the session's
    assert 0.3 <= record["cpu_seconds"] <= 2.0, record
    assert record["wall_seconds"] >= 0.1 + 0.3, record
    assert record["limits"] == {"rss": 100 << 20, "wall": 30.0, "cpu": 5.0}
    rss, wall, cpu = record["checks"]
    assert (rss["key"], rss["status"], wall["status"], cpu["status"]) == ("rss", "fail", "pass", "pass")
    assert rss["measured"] == record["rss_bytes"] and rss["margin"] == (100 << 20) - record["rss_bytes"]
    assert (wall["measured"], cpu["measured"]) == (record["wall_seconds"], record["cpu_seconds"])
    alloc = line_of(pytester, "test_json.py", "alloc")
    assert rss["where"] == f"test_json.py:{alloc}" and rss["blame"]["line"] == alloc
    assert rss["blame"]["file"].endswith("/test_json.py")
    assert rss["blame"]["source"].startswith("x = np.ones(200 * MIB")
    assert (wall["where"], wall["blame"], cpu["blame"]) == (None, None, None)
    assert "memory budget exceeded" in record["message"]

    # each check is the gate's own result, as memgauge check --format json writes it: one serialiser
    from memgauge.gate import CheckResult

    for check in record["checks"]:
        result = CheckResult.from_dict(check)
        assert {**result.to_dict(), "where": check["where"]} == check


def test_bad_budgets_are_usage_errors(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_bad="""
        import pytest

        @pytest.mark.memory_budget(rss="200MB", wall="2xs")
        def test_bad():
            pass
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "memory_budget marker of test_bad.py::test_bad" in err and "'wall=2xs'" in err, err
    assert "Traceback" not in err and "INTERNALERROR" not in result.stdout.str() + err

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--memgauge-budget", "rss=1GiB mem=2GiB")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--memgauge-budget: unknown metric 'mem'*in 'mem=2GiB'*", "*rss=1GiB mem=2GiB*"]
    )


def test_no_budget_no_measurement(pytester: pytest.Pytester) -> None:
    # the plugin is loaded (by its entry point) but nothing of memgauge's measurement is: no module,
    # no thread
    pytester.makepyfile(
        test_quiet="""
        import os
        import sys

        def test_nothing_runs():
            assert "memgauge.pytest_plugin" in sys.modules
            loaded = [m for m in sys.modules if m.startswith(("memgauge.", "rich", "memray"))]
            assert loaded == ["memgauge.pytest_plugin"] or sorted(loaded) == [
                "memgauge._version",
                "memgauge.pytest_plugin",
            ], loaded
            assert len(os.listdir("/proc/self/task")) == 1
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "memgauge: budgeted tests" not in result.stdout.str()


def test_memgauge_imported_before_pytest_is_no_warning(pytester: pytest.Pytester) -> None:
    # `memgauge run -- pytest` imports memgauge before pytest marks the plugin's package for
    # assertion rewriting: pytest would warn "Module already imported so cannot be rewritten"
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    code = "import sys, memgauge, pytest; sys.exit(pytest.main(['-p', 'no:cacheprovider', '-W', 'error']))"
    result = pytester.run(sys.executable, "-c", code)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert "already imported" not in result.stdout.str() + result.stderr.str()


def test_a_child_oom_killed_under_the_groups_limit_fails_its_test(pytester: pytest.Pytester) -> None:
    """Issue 16, the plugin's child-process variant of an OOM kill: pytest runs in a memory cgroup
    with a 300 MiB limit (a container's, a CI job's); a test's child touches 600 MiB, is
    OOM-killed, and the test ignores its exit status. The test fails its budget: its growth was at
    least the limit less what pytest held, never "within"."""
    import os
    import subprocess

    from memgauge.watcher import create_memory_group

    group, reason = create_memory_group("auto")
    if group is None:
        pytest.skip(f"no memory cgroup: {reason}")
    pytester.makepyfile(
        test_killed="""
        import subprocess
        import sys
        import pytest

        @pytest.mark.memory_budget("rss=100MiB")
        def test_killed_child():
            code = "x = b'x' * (600 << 20); import time; time.sleep(0.3)"
            r = subprocess.run([sys.executable, "-c", code])  # LINE: child
            assert r.returncode == -9

        @pytest.mark.memory_budget("rss=100MiB")
        def test_small_child():
            code = "x = b'x' * (20 << 20)"
            subprocess.run([sys.executable, "-c", code], check=True)
        """
    )
    procs = group.procs_file
    try:
        group.set_limit(300 << 20)

        def join() -> None:
            with open(procs, "w") as f:
                f.write(str(os.getpid()))

        r = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--memgauge-json", "out.json"],
            cwd=pytester.path,
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=join,
        )
        kills = group.oom_kills()
    finally:
        group.close()
    assert kills >= 1, r.stdout
    assert "1 failed, 1 passed" in r.stdout, r.stdout
    text = section(r.stdout, "test_killed_child")
    assert "rss at least" in text and "OOM killer killed a process of the tree" in text, text
    records = {
        t["nodeid"].split("::")[1]: t for t in json.loads((pytester.path / "out.json").read_text())["tests"]
    }
    (rss,) = records["test_killed_child"]["checks"]
    assert (rss["status"], rss["at_least"]) == ("fail", True)
    assert records["test_small_child"]["status"] == "pass"
