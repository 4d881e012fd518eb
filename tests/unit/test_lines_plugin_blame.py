"""The pytest plugin's correction of a breach's line (``memgauge._plugin_blame``): a test whose
last use of ``b"x" * n`` kept the GIL until it returned is seen by the sampler only in pytest's
frame (``_pytest/python.py:187 result = testfunction(**testargs)``, issue 16); the breach is the
test's own line."""

from __future__ import annotations

from memgauge._plugin_blame import own_line
from memgauge.gate import Verdict, judge, parse_budget
from tests.factories import held, make_profile

MIB = 1 << 20
PYTEST = "/venv/lib/python3.11/site-packages/_pytest/python.py"


def test_builds_300_mib() -> None:  # the "test" whose code is used below, never collected as such
    data = b"x" * (300 * MIB)  # LINE: bytes
    assert len(data)


test_builds_300_mib.__test__ = False  # type: ignore[attr-defined]


def _verdict(file: str, line: int) -> Verdict:
    profile = make_profile(rss=300 * MIB, attribution=[held(file, line, 300 * MIB)])
    return judge(profile, parse_budget("rss=100MiB"))


def test_a_breach_blamed_on_pytests_call_is_the_tests_own_line() -> None:
    code = test_builds_300_mib.__code__
    verdict = own_line(code, _verdict(PYTEST, 187))
    (rss,) = verdict.results
    assert rss.status == "fail" and rss.blame is not None
    assert (rss.blame.file, rss.blame.line) == (code.co_filename, code.co_firstlineno + 1)
    assert rss.blame.function == "test_builds_300_mib" and rss.blame.source.startswith("data = b")
    assert rss.blame.bytes == 300 * MIB  # what it held stays


def test_any_other_blame_and_a_test_without_code_stay_as_they_are() -> None:
    theirs = _verdict("/proj/test_x.py", 12)
    assert own_line(test_builds_300_mib.__code__, theirs) == theirs
    ours = _verdict(PYTEST, 187)
    assert own_line(None, ours) == ours
