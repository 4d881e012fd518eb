"""A budget's proof folded into a verdict (``gate.apply_proof``), and the proof's own reading of
its two runs (``runner.Proof``): one judgement for ``memgauge check --prove`` and the service's
``prove`` policies."""

from __future__ import annotations

from memgauge.gate import CheckResult, Limit, Verdict, apply_proof, proved_limit
from memgauge.runner import Proof, Trial

MIB = 1 << 20


def verdict(*results: CheckResult) -> Verdict:
    return Verdict(results=results)


def rss(status: str = "pass", note: str = "", phase: str | None = None) -> CheckResult:
    return CheckResult(Limit("rss", 200 * MIB, phase, "rss=200MiB"), 50 * MIB, status, note=note)


WALL = CheckResult(Limit("wall", 60.0, None, "wall=60s"), 1.0, "pass")


def trial(limit: int | None, *, survived: bool, kills: int = 0, hits: int = 0, wall: float = 1.0) -> Trial:
    return Trial(limit, True, survived, 0 if survived else None, kills, hits, wall, 50 * MIB, 40 * MIB)


def test_the_proved_limit_is_the_whole_run_rss() -> None:
    assert proved_limit(verdict(WALL, rss())) == 200 * MIB
    assert proved_limit(verdict(WALL, rss(phase="train"))) is None
    assert proved_limit(verdict(WALL)) is None


def test_a_killed_proof_fails_the_rss_result_only() -> None:
    out = apply_proof(verdict(WALL, rss(note="measured")), survived=False, note="proof: OOM-killed")
    assert not out.ok and [r.status for r in out.results] == ["pass", "fail"]
    assert out.results[1].note == "proof: OOM-killed" and out.results[1].measured == 50 * MIB


def test_a_surviving_proof_keeps_the_pass_and_adds_its_note() -> None:
    out = apply_proof(verdict(rss(note="measured"), WALL), survived=True, note="proof: survived")
    assert out.ok and out.results[0].note == "measured; proof: survived"


def test_a_verdict_without_a_whole_run_rss_is_unchanged() -> None:
    before = verdict(WALL, rss(phase="train"))
    assert apply_proof(before, survived=False, note="x") == before


def test_the_proof_reads_its_two_runs() -> None:
    base = trial(None, survived=True, wall=2.0)
    killed = Proof(150 * MIB, True, base, trial(150 * MIB, survived=False, kills=1, hits=3, wall=1.0))
    assert (killed.survived, killed.outcome, killed.slowdown) == (False, "OOM-killed", 0.5)
    assert (
        killed.note
        == "proof under 150 MiB, cold: OOM-killed, 0.50x the unlimited wall time, limit hit 3 times"
    )
    failed = Proof(150 * MIB, False, base, trial(150 * MIB, survived=False, wall=3.0))
    assert failed.outcome == "failed" and failed.note.startswith("proof under 150 MiB, warm: failed, 1.50x")
    ok = Proof(150 * MIB, True, base, trial(150 * MIB, survived=True, wall=2.0)).to_dict()
    assert ok["outcome"] == "survived" and ok["slowdown"] == 1.0 and ok["limit_hits"] == 0
