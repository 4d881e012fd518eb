"""``memgauge plan --catalogue``'s choice on sweeps built by construction: the laws over the worker
count, each shape's best count within its cores and memory, extrapolation flagged with its
interval, costs, the cheapest shape reaching a target, and the catalogue's reading."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from memgauge._errors import ProfileFormatError
from memgauge.analysis import Shape, choose_machines, worker_laws
from memgauge.cli._plan_catalogue import load_catalogue, machines_report
from memgauge.model import Point, RunSummary, SweepResult

MIB = 1 << 20
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def sweep(rates: dict[int, float], base: int = 100, per_worker: int = 50) -> SweepResult:
    """items/s ``rates[w]`` (100 items over 100 / rate seconds) at ``w`` workers, memory
    ``base + per_worker * w`` MiB."""
    points = [
        Point(
            {"WORKERS": w},
            [RunSummary(True, "0", (base + per_worker * w) * MIB, 100 / r, metrics={"items": 100})],
        )
        for w, r in rates.items()
    ]
    return SweepResult(["prog.py"], {"WORKERS": list(rates)}, 1, "local", None, points=points)


def test_the_laws_read_the_sweep() -> None:
    laws = worker_laws(sweep({1: 10.0, 2: 18.0, 4: 30.0}), "WORKERS", "items")
    assert laws.counts == (1, 2, 4) and laws.rates == (10.0, 18.0, 30.0)
    assert math.isclose(laws.memory_base, 100 * MIB) and math.isclose(laws.memory_per_worker, 50 * MIB)
    # 1/T = (1/T1)(s + (1 - s)/w): 1/18 = 0.1 (s + (1 - s)/2) gives s = 1/9
    assert 0.08 < laws.serial_share < 0.15
    assert laws.rate(2) == (18.0, 18.0, 18.0, False)
    assert laws.rate(3) == (24.0, 24.0, 24.0, False)  # between two measured counts
    rate, low, high, extrapolated = laws.rate(8)
    assert extrapolated and low == 30.0 and high == 60.0 and low <= rate <= high


def test_each_shape_at_its_best_count_within_cores_and_memory() -> None:
    laws = worker_laws(sweep({1: 10.0, 2: 18.0, 4: 30.0}), "WORKERS", "items")
    shapes = [
        Shape("small", 2, 1024 * MIB, 0.10),
        Shape("tight", 8, 300 * MIB, 0.30),  # memory for 4 workers only (100 + 50 w <= 300)
        Shape("big", 8, 4096 * MIB, 0.40),
        Shape("tiny", 4, 120 * MIB, 0.01),  # not even one worker
    ]
    choices, cheapest = choose_machines(laws, shapes)
    by = {c.shape.name: c for c in choices}
    assert (by["small"].workers, by["small"].rate, by["small"].extrapolated) == (2, 18.0, False)
    assert by["tight"].workers == 4 and by["tight"].memory_bytes == 300 * MIB
    assert by["big"].workers == 8 and by["big"].extrapolated
    assert by["tiny"].workers == 0 and by["tiny"].cost_per_million is None
    assert math.isclose(by["small"].cost_per_million or 0, 0.10 / (18.0 * 3600) * 1e6)
    assert cheapest is not None and cheapest.shape.name == "small"  # per million items
    # a target only an extrapolation could reach is not vouched for: the low end must reach it
    _, reaching = choose_machines(laws, shapes, target_rate=25.0)
    assert reaching is not None and reaching.shape.name == "tight"
    _, none = choose_machines(laws, shapes, target_rate=45.0)
    assert none is None
    text = machines_report(laws, choices, reaching, 25.0, "terminal")
    assert "extrapolated" in text and "cheapest reaching 25.0/s: tight" in text


def test_one_worker_count_is_not_a_law() -> None:
    with pytest.raises(ValueError, match="two or more"):
        worker_laws(sweep({2: 10.0}), "WORKERS", "items")


def test_the_example_catalogue_reads_and_a_bad_one_says_where(tmp_path: Path) -> None:
    shapes = load_catalogue(str(EXAMPLES / "machines.toml"))
    assert [s.name for s in shapes][:2] == ["general-2", "general-4"]
    assert "INVENTED EXAMPLES" in (EXAMPLES / "machines.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text('[[machine]]\nname = "x"\ncores = 2\n')
    with pytest.raises(ProfileFormatError, match="machine 1: needs name, cores, memory and price_per_hour"):
        load_catalogue(str(bad))
