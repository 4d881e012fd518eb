"""The pytest plugin names the test's own line that allocates: not pytest's call of the test
function (``_pytest/python.py``), and not the ``time.sleep`` after the allocation in a loop
(issue 16, part 4). Real pytest processes (``runpytest_subprocess``) measure themselves.

Not here: a loop whose helper touches its pages in a Python loop of a millisecond or more before
the sleep. On a loaded machine the sampler often gets the GIL only after the thread is asleep, and
then cannot tell it from a thread that waited for the GIL there: 34 to 78% of such a loop's kept
memory was charged to its sleep line in 5 runs of ``memgauge run`` (docs/measurement.md). Nor a
``b"x" * n`` dropped as soon as it is built: the sampler may get the GIL back only after the function
returned (3 of 6 runs of a 200 ms one under ``memgauge run``: no sample saw it; the peak stays exact
from ``VmHWM``, its line unknown, and the test failed 3 of 8 times), so ``test_one_line`` holds it."""

from __future__ import annotations

import json

import pytest

from tests.integration.test_pytest_plugin import line_of

pytest_plugins = ["pytester"]

TESTS = """
import time

import pytest

MIB = 1 << 20
_kept = []


@pytest.mark.memory_budget(rss="100MiB")
def test_one_line():
    data = b"x" * (300 * MIB)  # LINE: bytes
    assert len(data)
    time.sleep(0.05)  # held a moment: a spike that ends before any sample can be charged anywhere


@pytest.mark.memory_budget(rss="60MiB")
def test_loop():
    for _ in range(150):
        _kept.append(bytearray(b"x" * MIB))  # LINE: loop
        time.sleep(0.01)  # LINE: loop-sleep
"""


def test_each_test_is_blamed_on_its_own_allocating_line(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_alloc=TESTS)
    # memgauge's plugin alone: the dev dependencies' plugins (hypothesis's, and schemathesis's,
    # which calls into hypothesis) run gc.collect() around tests, in no test's frame, and a 300 MiB
    # line's late samples were charged there (3.10 lane: hypothesis/internal/entropy.py, twice,
    # the second with hypothesis's own plugin off)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "memgauge.pytest_plugin", "--memgauge-json", "out.json"
    )
    result.assert_outcomes(failed=2)
    records = {
        r["nodeid"].split("::")[1]: r for r in json.loads((pytester.path / "out.json").read_text())["tests"]
    }
    for test, tag in (("test_one_line", "bytes"), ("test_loop", "loop")):
        (rss,) = records[test]["checks"]
        line = line_of(pytester, "test_alloc.py", tag)
        # the growth is the test's by construction (300 MiB, 150 x 1 MiB kept)
        assert rss["status"] == "fail", (test, rss)
        assert rss["where"] == f"test_alloc.py:{line}", (test, rss["where"], rss["blame"])
        assert "_pytest" not in records[test]["message"], records[test]["message"]
        assert f"at test_alloc.py:{line} " in records[test]["message"], records[test]["message"]
