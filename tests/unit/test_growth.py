"""Growth laws for scaling sweeps (``memgauge.analysis._growth``, ``_predict``, ``_tdist`` and
``_scaling``): law choice, prediction intervals, refusals to extrapolate, the largest size under a
budget, and worker scaling, all on synthetic data whose truth is known. "Noise" is a fixed pattern of
signs, so every run gives the same numbers."""

from __future__ import annotations

import math

import pytest

from memgauge.analysis._growth import LAWS, Growth, fit_law, select_law
from memgauge.analysis._predict import Prediction, largest_within, predict, reach
from memgauge.analysis._scaling import worker_scaling
from memgauge.analysis._tdist import t_quantile


def chosen(xs: list[float], ys: list[float]) -> Growth:
    growth = select_law(xs, ys)
    assert growth is not None
    return growth


def linear(x: float) -> float:
    return 30e6 + 1000 * x


OCTAVES = [1e4, 2e4, 4e4, 8e4]


# -- choosing a law ---------------------------------------------------------------------------------


def test_exact_linear_data_recover_the_law_and_its_coefficients() -> None:
    growth = chosen(OCTAVES, [linear(x) for x in OCTAVES])
    assert growth.best.law == "linear"
    assert growth.best.a == pytest.approx(30e6, rel=1e-6)
    assert growth.best.b == pytest.approx(1000, rel=1e-6)
    assert growth.best.k is None
    assert growth.best.parameters == 2
    assert growth.best.n == 4
    assert growth.distinct_x == 4
    assert growth.best.formula() == "3e+07 + 1000·N"
    assert "fewest parameters" in growth.criterion
    prediction = predict(growth, 8e5)
    assert prediction.value == pytest.approx(linear(8e5), rel=1e-3)
    assert prediction.low < linear(8e5) < prediction.high
    assert prediction.supported
    assert prediction.reason is None
    assert prediction.law == "linear"


def test_candidates_are_every_fitted_law_lowest_aicc_first() -> None:
    growth = chosen(OCTAVES, [linear(x) for x in OCTAVES])
    assert sorted(f.law for f in growth.candidates) == sorted(LAWS)
    aiccs = [f.aicc for f in growth.candidates]
    assert aiccs == sorted(aiccs)
    # 4 runs leave n - p - 1 = 0 for the power law: listed, but not compared
    power = next(f for f in growth.candidates if f.law == "power")
    assert power.aicc == math.inf
    assert growth.candidates[-1].law == "power"


def test_quadratic_data_choose_quadratic_over_the_equally_exact_power_law() -> None:
    xs = [1e3, 2e3, 5e3, 1e4, 2e4, 5e4]
    growth = chosen(xs, [5e6 + 2 * x * x for x in xs])
    assert growth.best.law == "quadratic"
    assert growth.best.a == pytest.approx(5e6, rel=1e-6)
    assert growth.best.b == pytest.approx(2, rel=1e-6)
    power = next(f for f in growth.candidates if f.law == "power")
    assert power.k == pytest.approx(2.0, abs=1e-3)
    assert growth.best.formula() == "5e+06 + 2·N^2"


def test_power_law_data_choose_power_and_recover_the_exponent() -> None:
    xs = [1e3, 3e3, 1e4, 3e4, 1e5, 3e5, 1e6]
    growth = chosen(xs, [1e6 + 3 * x**1.5 for x in xs])
    assert growth.best.law == "power"
    assert growth.best.parameters == 3
    assert growth.best.k is not None
    assert abs(growth.best.k - 1.5) < 0.01
    assert growth.best.formula() == "1e+06 + 3·N^1.5"


def test_power_law_exponent_off_the_grid_is_refined() -> None:
    xs = [1e3, 3e3, 1e4, 3e4, 1e5, 3e5, 1e6]
    fit = fit_law("power", xs, [2e5 + 0.5 * x**1.2345 for x in xs])
    assert fit is not None
    assert fit.k == pytest.approx(1.2345, abs=2e-4)


def test_n_log_n_data_over_a_wide_range_choose_n_log_n() -> None:
    xs = [1e2, 1e3, 1e4, 1e5, 1e6, 1e7]
    growth = chosen(xs, [100 * x * math.log(x) + 1e6 for x in xs])
    assert growth.best.law == "n log n"
    assert growth.best.b == pytest.approx(100, rel=1e-6)
    assert growth.best.formula() == "1e+06 + 100·N log N"


def test_flat_data_with_half_percent_noise_choose_constant() -> None:
    xs = [1e3, 2e3, 4e3, 8e3, 16e3]
    ys = [1e8 * (1 + 0.005 * (-1) ** i) for i in range(len(xs))]
    growth = chosen(xs, ys)
    assert growth.best.law == "constant"
    assert growth.best.b == 0.0
    assert growth.best.parameters == 1
    assert growth.best.formula() == "1.001e+08"
    # R² of a constant is 0 by construction and must not count as a poor fit
    prediction = predict(growth, 1e5)
    assert prediction.supported, prediction.reason
    assert prediction.low < 1e8 < prediction.high


def test_a_noisier_constant_is_not_a_poor_fit_for_its_zero_r2() -> None:
    xs = [1e3, 2e3, 4e3, 8e3, 16e3]
    growth = chosen(xs, [1e8 * (1 + 0.03 * (-1) ** i) for i in range(len(xs))])
    assert growth.best.law == "constant"
    assert growth.best.r2 == pytest.approx(0.0, abs=1e-12)
    assert 0.01 < growth.best.rms_relative < 0.15
    assert predict(growth, 3e4).supported


def test_slow_growth_within_noise_is_not_a_poor_fit_for_its_low_r2() -> None:
    xs: list[float] = []
    ys: list[float] = []
    for size in [1e3, 2e3, 3e3, 4e3, 5e3]:
        for error in (0.005, -0.005, 0.005, -0.005):
            xs.append(size)
            ys.append((1e8 + 1e3 * size) * (1 + error))
    growth = chosen(xs, ys)
    assert growth.best.law == "linear"
    # 4% growth under 0.5% noise: R² is low because the noise is a large share of the variation
    assert growth.best.r2 < 0.9
    prediction = predict(growth, 1e4)
    assert prediction.supported, prediction.reason
    assert prediction.low < 1e8 + 1e7 < prediction.high


def test_noisy_repeated_linear_runs_still_choose_linear_and_cover_the_truth() -> None:
    xs: list[float] = []
    ys: list[float] = []
    for size in [1e4, 2e4, 5e4, 1e5]:
        for error in (0.01, -0.01, 0.0):
            xs.append(size)
            ys.append(linear(size) * (1 + error))
    growth = chosen(xs, ys)
    assert growth.best.law == "linear"
    assert growth.best.n == 12
    assert growth.distinct_x == 4
    prediction = predict(growth, 1e6)
    assert prediction.value == pytest.approx(linear(1e6), rel=0.03)
    assert prediction.low < linear(1e6) < prediction.high
    # repeated runs make the scatter, not the floor, set the width: wider than for exact data
    exact = predict(chosen(xs, [linear(x) for x in xs]), 1e6)
    assert prediction.high - prediction.low > exact.high - exact.low


def test_fit_quality_figures() -> None:
    xs = [1.0, 2.0, 3.0, 4.0]
    ys = [10.0, 10.0, 10.0, 20.0]
    fit = fit_law("constant", xs, ys)
    assert fit is not None
    # weights 1/y²: the weighted mean is (3·(1/10) + 1/20) / (3/100 + 1/400) = 140/13
    assert fit.a == pytest.approx(140 / 13)
    relative = [(y - 140 / 13) / y for y in ys]
    assert fit.rms_relative == pytest.approx(math.sqrt(sum(r * r for r in relative) / 4))
    assert fit.r2 == pytest.approx(0.0, abs=1e-12)
    assert fit.aicc == pytest.approx(4 * math.log(fit.ssr_w / 4) + 2 + 4 / 2)


def test_perfect_fits_are_floored_at_a_tenth_of_a_percent() -> None:
    xs = [1.0, 2.0, 3.0, 4.0, 5.0]
    fit = fit_law("linear", xs, [2.0 * x for x in xs])
    assert fit is not None
    assert fit.r2 == 1.0
    assert fit.aicc == pytest.approx(5 * math.log(1e-6) + 4 + 12 / 2)


def test_laws_needing_positive_sizes_are_skipped_at_zero() -> None:
    xs = [0.0, 1.0, 2.0, 3.0, 4.0]
    ys = [5.0, 6.0, 7.0, 8.0, 9.0]
    assert fit_law("n log n", xs, ys) is None
    assert fit_law("power", xs, ys) is None
    growth = chosen(xs, ys)
    assert {f.law for f in growth.candidates} == {"constant", "linear", "quadratic"}
    assert growth.best.law == "linear"


def test_non_positive_values_get_a_floored_weight() -> None:
    xs = [1.0, 2.0, 3.0, 4.0]
    fit = fit_law("linear", xs, [0.0, 1.0, 2.0, 3.0])
    assert fit is not None
    assert fit.a == pytest.approx(-1.0)
    assert fit.b == pytest.approx(1.0)
    assert math.isfinite(fit.rms_relative)


def test_fit_law_needs_enough_observations_and_sizes() -> None:
    assert fit_law("linear", [1.0], [1.0]) is None
    assert fit_law("linear", [1.0, 1.0, 1.0], [1.0, 2.0, 3.0]) is None
    assert fit_law("power", [1.0, 2.0], [1.0, 2.0]) is None
    two = fit_law("linear", [1.0, 2.0], [1.0, 2.0])
    assert two is not None
    assert two.aicc == math.inf
    assert select_law([1.0], [1.0]) is None
    assert select_law([3.0, 3.0, 3.0], [1.0, 2.0, 3.0]) is None


def test_too_few_runs_assume_linear_and_say_so() -> None:
    growth = chosen([1e3, 2e3, 4e3], [1e6, 2e6, 4e6])
    # only the constant law can be compared with 3 runs: nothing was compared
    assert growth.best.law == "linear"
    assert "Too few observations" in growth.criterion
    prediction = predict(growth, 8e3)
    assert not prediction.supported
    assert prediction.reason is not None
    assert "too few runs to compare laws: 3 runs at 3 sizes" in prediction.reason
    assert prediction.value == pytest.approx(8e6)


@pytest.mark.parametrize(
    ("xs", "ys"),
    [
        ([1.0, 2.0], [1.0]),
        ([1.0, math.nan], [1.0, 2.0]),
        ([1.0, 2.0], [1.0, math.inf]),
    ],
)
def test_bad_input_is_refused(xs: list[float], ys: list[float]) -> None:
    with pytest.raises(ValueError, match="sizes"):
        select_law(xs, ys)
    with pytest.raises(ValueError, match="sizes"):
        fit_law("linear", xs, ys)


def test_unknown_law_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown law"):
        fit_law("cubic", [1.0, 2.0], [1.0, 2.0])


# -- the t quantile -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dof", "expected"),
    [(1, 12.706), (2, 4.303), (5, 2.571), (10, 2.228), (30, 2.042), (1000, 1.962)],
)
def test_t_quantile_matches_the_tables(dof: int, expected: float) -> None:
    assert t_quantile(0.95, dof) == pytest.approx(expected, abs=5e-4)


def test_t_quantile_at_other_confidences() -> None:
    assert t_quantile(0.99, 5) == pytest.approx(4.032, abs=5e-4)
    assert t_quantile(0.90, 10) == pytest.approx(1.812, abs=5e-4)
    with pytest.raises(ValueError):
        t_quantile(1.0, 5)


# -- refusals -----------------------------------------------------------------------------------------


def refused(prediction: Prediction, text: str) -> None:
    assert not prediction.supported
    assert prediction.reason is not None
    assert text in prediction.reason, prediction.reason
    # shown greyed out: the numbers are still there
    assert math.isfinite(prediction.value)


def test_two_sizes_cannot_choose_a_law() -> None:
    growth = chosen([1e3, 1e3, 2e3, 2e3], [1e6, 1.01e6, 2e6, 2.02e6])
    assert growth.distinct_x == 2
    assert growth.best.law == "linear"
    refused(predict(growth, 4e3), "3 sizes are needed to choose a law; measured 2")


def test_far_extrapolation_is_refused() -> None:
    growth = chosen(OCTAVES, [linear(x) for x in OCTAVES])
    refused(predict(growth, 1e7), "N=1e+07 is 125x the largest size measured (80000)")
    # 4 sizes reach 16x the largest
    assert predict(growth, 16 * 8e4).supported
    refused(predict(growth, 17 * 8e4), "with 4 sizes measured at most 16x is extrapolated")
    refused(predict(growth, 50), "N=50 is 1/200 of the smallest size measured (10000)")
    six = [1e3, 2e3, 4e3, 8e3, 16e3, 32e3]
    assert predict(chosen(six, [linear(x) for x in six]), 100 * 32e3).supported


def test_three_sizes_do_not_vouch_for_five_times_the_largest() -> None:
    # the sweep: 3 row counts from 1e4 to 4e4, a law chosen, asked about 200k rows (5x)
    # (each run twice, as with --repeat 2: enough runs to compare the laws)
    xs = [1e4, 1e4, 2e4, 2e4, 4e4, 4e4]
    growth = chosen(xs, [(50e6 + 1e3 * x + 0.01 * x * x) * (1 + 0.002 * (-1) ** i) for i, x in enumerate(xs)])
    assert predict(growth, 1.6e5).supported  # 4x the largest
    refused(predict(growth, 2e5), "N=200000 is 5x the largest size measured (40000)")
    refused(predict(growth, 2e5), "with 3 sizes measured at most 4x is extrapolated")
    assert reach(3) == 4 and reach(4) == 16 and reach(5) == 64 and reach(6) == reach(9) == 100


def test_a_poor_fit_is_refused() -> None:
    xs = [1e3, 2e3, 4e3, 8e3, 16e3, 32e3]
    ys = [1e6 * (3 if i % 2 else 1) * (1 + x / 1e4) for i, x in enumerate(xs)]
    prediction = predict(chosen(xs, ys), 4e4)
    refused(prediction, "fits poorly")
    refused(prediction, "RMS error")


def test_two_laws_that_disagree_at_the_target_are_refused() -> None:
    # a narrow range with 0.3% noise: linear and n log n fit as well as each other, and part at 50x
    xs = [1e5, 1.2e5, 1.4e5, 1.6e5, 1.8e5, 2e5]
    noise = [0.003, -0.003, 0.0, 0.003, -0.003, 0.0]
    growth = chosen(xs, [(2e6 + 100 * x) * (1 + e) for x, e in zip(xs, noise, strict=True)])
    fits = {f.law: f for f in growth.candidates}
    assert abs(fits["linear"].aicc - fits["n log n"].aicc) < 2
    assert growth.best.law == "linear"
    refused(predict(growth, 1e7), "linear and n log n fit about equally well but differ by")
    refused(predict(growth, 1e7), "at N=1e+07; measure larger sizes")
    # inside the measured range they agree
    assert predict(growth, 1.5e5).supported


def test_a_wide_interval_is_refused() -> None:
    # 12% noise from 5 runs: a good enough fit, but far too uncertain 50x out
    xs = [1e3, 2e3, 4e3, 8e3, 16e3]
    noise = [0.12, -0.12, 0.12, -0.12, 0.12]
    growth = chosen(xs, [1000 * x * (1 + e) for x, e in zip(xs, noise, strict=True)])
    assert growth.best.law == "linear"
    assert growth.best.r2 > 0.9
    assert growth.best.rms_relative < 0.15
    refused(predict(growth, 8e5), "the interval at N=800000 is ±59%, wider than ±50%")


# -- the largest size under a budget ---------------------------------------------------------------------

SIZES = [1e4, 2e4, 3e4, 4e4, 5e4, 6e4, 7e4, 8e4]


def test_largest_within_is_just_below_the_exact_solution() -> None:
    growth = chosen(SIZES, [linear(x) for x in SIZES])
    exact = (1e9 - 30e6) / 1000
    found = largest_within(growth, 1e9, upper=1e7)
    assert found is not None
    assert 0.99 * exact <= found < exact
    assert found == math.floor(found)
    # conservative: the high end of the interval at the answer is within the limit, just above it not
    assert predict(growth, found).high <= 1e9
    assert predict(growth, found + 1).high > 1e9


def test_largest_within_without_flooring() -> None:
    growth = chosen(SIZES, [linear(x) for x in SIZES])
    whole = largest_within(growth, 1e9, upper=1e7)
    exact = largest_within(growth, 1e9, upper=1e7, integer=False)
    assert whole is not None
    assert exact is not None
    assert exact != math.floor(exact)
    assert whole == math.floor(exact)


def test_largest_within_stops_at_upper_and_at_the_smallest_size() -> None:
    growth = chosen(SIZES, [linear(x) for x in SIZES])
    assert largest_within(growth, 1e9, upper=2e5) == 2e5
    # the smallest size (40 MB) already exceeds 30 MB
    assert largest_within(growth, 3e7, upper=1e7) is None
    with pytest.raises(ValueError, match="below the smallest size"):
        largest_within(growth, 1e9, upper=10)


def test_largest_within_when_values_fall_with_size() -> None:
    xs = [1e3, 2e3, 4e3, 8e3, 16e3]
    growth = chosen(xs, [1e8 - 1000 * x for x in xs])
    assert growth.best.b < 0
    assert largest_within(growth, 1.2e8, upper=5e4) == 5e4
    # smaller runs need more here, and the smallest does not fit
    assert largest_within(growth, 0.95e8, upper=5e4) is None


# -- worker scaling ----------------------------------------------------------------------------------


def test_worker_scaling_finds_the_knee() -> None:
    scaling = worker_scaling([1, 2, 4, 8], [100, 190, 200, 205])
    assert [p.workers for p in scaling.points] == [1, 2, 4, 8]
    assert [p.speedup for p in scaling.points] == pytest.approx([1, 1.9, 2, 2.05])
    assert [p.efficiency for p in scaling.points] == pytest.approx([1, 0.95, 0.5, 0.25625])
    assert scaling.knee == 2
    assert "half" in scaling.criterion


def test_linear_worker_scaling_has_no_knee() -> None:
    scaling = worker_scaling([1, 2, 4, 8], [100, 200, 400, 800])
    assert scaling.knee is None
    assert [p.efficiency for p in scaling.points] == pytest.approx([1, 1, 1, 1])


def test_worker_scaling_uses_the_median_of_repeated_counts_and_sorts() -> None:
    scaling = worker_scaling([4, 1, 2, 1, 2, 1, 2], [390, 100, 150, 90, 200, 500, 195])
    assert [p.workers for p in scaling.points] == [1, 2, 4]
    assert [p.throughput for p in scaling.points] == [100, 195, 390]
    assert scaling.knee is None
    # the knee is the count before the first poor step, not the last count
    assert worker_scaling([2, 4, 6, 8], [100, 200, 210, 280]).knee == 4


def test_worker_scaling_with_fewer_than_two_counts() -> None:
    assert worker_scaling([4], [100]).knee is None
    assert worker_scaling([4, 4], [100, 120]).points[0].throughput == 110
    assert worker_scaling([], []).points == ()


def test_worker_scaling_refuses_bad_input() -> None:
    with pytest.raises(ValueError):
        worker_scaling([1, 2], [100])
    with pytest.raises(ValueError):
        worker_scaling([1, 2], [100, math.nan])
    with pytest.raises(ValueError):
        worker_scaling([0, 2], [100, 200])


def test_a_confirmed_size_replaces_the_laws_answer_and_counts_agree() -> None:
    from memgauge.analysis import analyze
    from memgauge.model import Confirmation, Point, RunSummary, SweepResult
    from memgauge.render import HtmlSweepRenderer

    mib = 1 << 20

    def run(n: int, mib_per_item: float) -> RunSummary:
        return RunSummary(ok=True, exit="exit 0", rss_bytes=int(50 * mib + mib_per_item * mib * n))

    sizes = [1000, 2000, 4000, 8000]
    points = [Point({"N": n}, [run(n, 0.01), run(n, 0.0101)]) for n in sizes]
    result = SweepResult(["python", "p.py"], {"N": list(sizes)}, 2, "local", 1, points=points)
    limit = 600.0 * mib
    (row,) = analyze(result, limits=[("rss", limit, "rss=600MiB")]).binding
    assert row.status == "fits" and row.largest is not None and row.law_largest is None
    # a real run at a smaller size than the law's answer measured within the limit, but at a
    # figure the law did not expect (the program grows faster there): its size is the answer
    confirmed = int(row.largest * 0.6)
    result.confirmations.append(
        Confirmation(
            {"N": confirmed},
            "rss",
            row.prediction.value if row.prediction else 0,
            limit,
            run(confirmed, 0.015),
        )
    )
    analysis = analyze(result, limits=[("rss", limit, "rss=600MiB")])
    (again,) = analysis.binding
    assert again.largest == confirmed and again.law_largest is not None and again.law_largest != confirmed
    assert any(
        f"N={confirmed} was confirmed by a real run" in n and "is the answer" in n for n in analysis.notes
    )
    # the law table's runs and the card's count the same runs: 8 swept, 1 confirming
    assert {law.observations for law in analysis.laws if law.metric == "rss"} == {9}
    page = HtmlSweepRenderer().render(analysis)
    assert "9" in page and "(1 confirming)" in page
