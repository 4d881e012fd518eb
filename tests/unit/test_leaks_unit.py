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
