"""The leak fit's rules on hand-made series, and the profile's held-at-exit fields (issue 16)."""

from __future__ import annotations

from memgauge.analysis import leak_suspects
from memgauge.model import HeldLine, Profile
from tests.factories import make_profile

MIB = 1 << 20


def test_a_steady_growth_to_the_end_is_a_suspect() -> None:
    points = [(t / 10, int(t * MIB)) for t in range(30)]
    (fit,) = leak_suspects({"line": points}, 3.0, [])
    assert 9 * MIB < fit.rate_bytes_per_second < 11 * MIB


def test_a_bounded_cache_that_filled_then_churns_is_not() -> None:
    # 64 MiB in the first 0.65 s, then a page up now and then until the end (2 s): not growing
    filling = [(t / 100, int(t * MIB)) for t in range(65)]
    churn = [(0.65 + k * 0.05, 64 * MIB + (k % 3) * 4096) for k in range(27)]
    assert leak_suspects({"cache": filling + churn}, 2.0, []) == []


def test_held_at_exit_and_the_note_are_optional_in_the_profile() -> None:
    plain = make_profile()
    assert "held_at_exit" not in plain.to_dict() and "leak_note" not in plain.to_dict()
    plain.held_at_exit = [HeldLine(1, "a.py", 3, "f", 400 * MIB, "kept.append(x)")]
    plain.leak_note = "too short to judge growth"
    again = Profile.from_dict(plain.to_dict())
    assert again.held_at_exit == plain.held_at_exit and again.leak_note == plain.leak_note


# the one-off build rule: the same steady growth, told apart by where the thread was meanwhile
_STEADY = [(t / 100, int(t * MIB)) for t in range(101)]  # 100 MiB over 1 s, to the end
_LINE = ("prog.py", 8, "<module>")


def test_a_line_the_thread_ran_all_along_is_a_one_off_build() -> None:
    # a loop filling a kept list: the thread ran (or was queued to run) the line the whole second
    built = leak_suspects({_LINE: _STEADY}, 1.0, [], stacks=[[_LINE]], seconds_at={_LINE: (0.3, 0.68, 0.02)})
    assert built == []
    # without the threads' time, the rule is off: the same series is a suspect
    assert [f.key for f in leak_suspects({_LINE: _STEADY}, 1.0, [])] == [_LINE]


def test_a_line_interleaved_with_other_lines_is_a_leak() -> None:
    # the request loop: the allocating line took a tenth of the span, the sleep after it the rest
    sleep = ("prog.py", 9, "handle")
    times = {_LINE: (0.08, 0.02, 0.0), sleep: (0.01, 0.0, 0.89)}
    (fit,) = leak_suspects({_LINE: _STEADY}, 1.0, [], stacks=[[_LINE], [sleep]], seconds_at=times)
    assert fit.key == _LINE


def test_a_wait_line_credited_with_growth_is_not_a_build() -> None:
    # a loaded machine hid that the thread was blocked: the sleep line got the growth and sat there
    # most of the span (running or queued after each wake: 0.82 of it), but it waited longer than
    # it ran
    sleep = ("prog.py", 9, "handle")
    times = {sleep: (0.12, 0.7, 0.15)}
    (fit,) = leak_suspects({sleep: _STEADY}, 1.0, [], stacks=[[sleep]], seconds_at=times)
    assert fit.key == sleep


def test_a_build_in_a_called_function_is_judged_on_the_lines_it_ran() -> None:
    # kept = build() -> out.append(...): the call line holds the growth, the thread ran the inner line
    call = ("prog.py", 20, "<module>")
    inner = ("prog.py", 12, "build")
    series = {call: _STEADY, inner: _STEADY}
    stacks = [[call, inner]]
    callers = [(call, inner)]
    assert leak_suspects(series, 1.0, callers, stacks=stacks, seconds_at={inner: (0.9, 0.05, 0.0)}) == []
    # the same stacks in a request loop that waits elsewhere most of the time: the deeper line
    (fit,) = leak_suspects(series, 1.0, callers, stacks=stacks, seconds_at={inner: (0.05, 0.0, 0.0)})
    assert fit.key == inner
