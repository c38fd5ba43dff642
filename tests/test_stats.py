"""chartscore.stats.binomial checked against independent oracles and published values.

The oracles (statsmodels, scipy, scikit-learn) are test-only dependencies; chartscore
itself never imports them.
"""

from __future__ import annotations

import decimal
import math
import warnings
from collections.abc import Iterable, Sequence
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.stats import norm
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

from chartscore.stats.binomial import Z95, cohen_kappa, wilson_interval

from helpers import examples

Table = list[list[int]]

# Floating-point agreement with statsmodels: same formula, different operation order
# and a z that differs in the last bits.
EXACT = {"rel": 1e-12, "abs": 1e-15}


def statsmodels_wilson(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    low, high = proportion_confint(k, n, alpha=alpha, method="wilson")
    return float(low), float(high)


# --------------------------------------------------------------------------- Z95


def test_z95_is_the_two_sided_95_percent_normal_quantile() -> None:
    # NormalDist and scipy agree to within a couple of ulps (scipy: 1.959963984540054).
    assert pytest.approx(norm.ppf(0.975), rel=1e-15, abs=0) == Z95
    assert pytest.approx(1.959963984540054, rel=1e-15, abs=0) == Z95
    assert norm.cdf(Z95) - norm.cdf(-Z95) == pytest.approx(0.95, abs=1e-14)
    # The exact binary64 value docs/metrics.md prints: 2 ulp below scipy's.
    assert Z95 == 1.9599639845400536
    assert math.nextafter(math.nextafter(1.959963984540054, 0), 0) == Z95


def test_metrics_md_prints_the_codes_z() -> None:
    text = (Path(__file__).resolve().parent.parent / "docs" / "metrics.md").read_text("utf-8")
    assert "1.9599639845400536" in text
    assert "1.959963984540054 " not in text and "1.959963984540054)" not in text
    assert "1.959964 " not in text


# --------------------------------------------------------------------------- Wilson


@st.composite
def counts(draw: st.DrawFn, max_trials: int = 10**6) -> tuple[int, int]:
    """(k, n) with 1 <= n <= max_trials and 0 <= k <= n, edges included."""
    n = draw(st.integers(1, max_trials))
    k = draw(st.one_of(st.sampled_from([0, 1, n - 1, n]), st.integers(0, n)))
    return max(0, min(k, n)), n


@settings(max_examples=examples(500))
@given(counts())
def test_wilson_matches_statsmodels(kn: tuple[int, int]) -> None:
    k, n = kn
    result = wilson_interval(k, n)
    assert result is not None
    assert result == pytest.approx(statsmodels_wilson(k, n), **EXACT)


def test_wilson_matches_statsmodels_for_every_small_table() -> None:
    for n in range(1, 61):
        for k in range(n + 1):
            result = wilson_interval(k, n)
            assert result is not None
            assert result == pytest.approx(statsmodels_wilson(k, n), **EXACT), (k, n)


@pytest.mark.parametrize(("z", "alpha"), [(norm.ppf(0.995), 0.01), (norm.ppf(0.95), 0.10)])
@settings(max_examples=examples(100))
@given(kn=counts(max_trials=10**5))
def test_wilson_with_other_quantiles_matches_statsmodels(
    z: float, alpha: float, kn: tuple[int, int]
) -> None:
    k, n = kn
    assert wilson_interval(k, n, z=z) == pytest.approx(statsmodels_wilson(k, n, alpha), **EXACT)


# A 60-digit reference: the exact Wilson bounds for the binary64 z the code uses.
_PRECISE = decimal.Context(prec=60)


def precise_wilson(k: int, n: int, z: float = Z95) -> tuple[Decimal, Decimal]:
    """(k + z^2/2 -/+ z sqrt(k(n-k)/n + z^2/4)) / (n + z^2), the textbook roots, to 60 digits."""
    c = _PRECISE
    zd = Decimal(z)  # exact: the float's binary value
    z2 = c.multiply(zd, zd)
    root = c.sqrt(c.add(c.divide(Decimal(k * (n - k)), Decimal(n)), c.divide(z2, 4)))
    center = c.add(Decimal(k), c.divide(z2, 2))
    spread = c.multiply(zd, root)
    denominator = c.add(Decimal(n), z2)
    return c.divide(c.subtract(center, spread), denominator), c.divide(
        c.add(center, spread), denominator
    )


def ulp_error(value: float, exact: Decimal) -> float:
    """|value - exact| in units of the last place of the correctly rounded exact value."""
    nearest = float(exact)
    if nearest == 0:
        return 0.0 if value == 0 else math.inf
    return float(abs(Decimal(value) - exact) / Decimal(math.ulp(nearest)))


def _textbook_lower(k: int, n: int, z: float = Z95) -> float:
    # The previous center - margin form, kept to show what the product form fixes.
    p = k / n
    z2 = z * z
    denominator = 1 + z2 / n
    center = (p + z2 / (2 * n)) / denominator
    margin = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n**2)) / denominator
    return center - margin


def test_wilson_lower_bound_near_one_success_is_accurate() -> None:
    # The audit's worst case: the textbook form loses 35 ulp at k = 1, n = 184.
    exact_lower, exact_upper = precise_wilson(1, 184)
    assert ulp_error(_textbook_lower(1, 184), exact_lower) > 30
    result = wilson_interval(1, 184)
    assert result is not None
    assert ulp_error(result[0], exact_lower) <= 1
    assert ulp_error(result[1], exact_upper) <= 1


WILSON_ULP_BOUND = 4.0


def test_wilson_is_within_a_few_ulp_of_a_60_digit_reference_for_small_tables() -> None:
    worst = [0.0, 0.0]
    for n in range(1, 201):
        for k in range(n + 1):
            result = wilson_interval(k, n)
            assert result is not None
            exact = precise_wilson(k, n)
            for side in (0, 1):
                if (side == 0 and k == 0) or (side == 1 and k == n):
                    continue  # pinned exactly to 0 and 1
                worst[side] = max(worst[side], ulp_error(result[side], exact[side]))
    assert worst[0] <= WILSON_ULP_BOUND, worst
    assert worst[1] <= WILSON_ULP_BOUND, worst


@settings(max_examples=examples(500))
@given(counts(max_trials=10**12))
def test_wilson_is_within_a_few_ulp_of_a_60_digit_reference(kn: tuple[int, int]) -> None:
    k, n = kn
    result = wilson_interval(k, n)
    assert result is not None
    lower, upper = precise_wilson(k, n)
    if k > 0:
        assert ulp_error(result[0], lower) <= WILSON_ULP_BOUND
    else:
        assert result[0] == 0.0
    if k < n:
        assert ulp_error(result[1], upper) <= WILSON_ULP_BOUND
    else:
        assert result[1] == 1.0


def test_wilson_follows_the_documented_evaluation_order() -> None:
    # docs/metrics.md, "Intervals", written out independently: the same bits.
    z = 1.9599639845400536
    for n in range(1, 61):
        for k in range(n + 1):
            z2 = z * z
            t = k * (n - k) / n
            s = k + z2 / 2 + z * math.sqrt(t + z2 / 4)
            expected = (k * k / (n * s), 1.0 if k == n else min(1.0, s / (n + z2)))
            assert wilson_interval(k, n) == expected, (k, n)


# R. G. Newcombe (1998), "Two-sided confidence intervals for the single proportion:
# comparison of seven methods", Statistics in Medicine 17:857-872, Table I, method 3
# (Wilson score interval without continuity correction). Each row was checked against
# statsmodels' proportion_confint(method="wilson") and agrees to 4 decimals.
NEWCOMBE_1998_TABLE_I = [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0, 0.1611),
    (1, 29, 0.0061, 0.1718),
]


@pytest.mark.parametrize(("k", "n", "lower", "upper"), NEWCOMBE_1998_TABLE_I)
def test_wilson_matches_newcombe_1998_table_1(k: int, n: int, lower: float, upper: float) -> None:
    result = wilson_interval(k, n)
    assert result is not None
    assert result[0] == pytest.approx(lower, abs=5e-5)
    assert result[1] == pytest.approx(upper, abs=5e-5)
    # The oracle agrees with the published table too (guards the table itself).
    assert statsmodels_wilson(k, n) == pytest.approx((lower, upper), abs=5e-5)


def test_wilson_of_no_trials_is_none() -> None:
    assert wilson_interval(0, 0) is None


@pytest.mark.parametrize(
    ("k", "n"),
    [
        (-1, 5),
        (6, 5),
        (0, -1),
        (-1, -1),
        (1, 0),
        (True, 5),
        (1, True),
        (False, 0),
        (1.0, 5),
        (1, 5.0),
        ("1", 5),
        (None, 5),
    ],
)
def test_wilson_rejects_invalid_counts(k: object, n: object) -> None:
    with pytest.raises(ValueError):
        wilson_interval(k, n)  # type: ignore[arg-type]


@settings(max_examples=examples(300))
@given(st.integers(1, 10**6))
def test_wilson_endpoints_are_exact_at_the_extremes(n: int) -> None:
    none_seen = wilson_interval(0, n)
    all_seen = wilson_interval(n, n)
    assert none_seen is not None
    assert all_seen is not None
    assert none_seen[0] == 0.0
    assert all_seen[1] == 1.0
    assert 0.0 < none_seen[1] < 1.0
    assert 0.0 < all_seen[0] < 1.0


@settings(max_examples=examples(500))
@given(counts())
def test_wilson_bounds_contain_the_proportion(kn: tuple[int, int]) -> None:
    k, n = kn
    result = wilson_interval(k, n)
    assert result is not None
    lower, upper = result
    assert 0.0 <= lower <= k / n <= upper <= 1.0
    assert lower < upper


@settings(max_examples=examples(500))
@given(counts())
def test_wilson_is_symmetric_in_successes_and_failures(kn: tuple[int, int]) -> None:
    k, n = kn
    result = wilson_interval(k, n)
    mirrored = wilson_interval(n - k, n)
    assert result is not None
    assert mirrored is not None
    assert result[0] == pytest.approx(1.0 - mirrored[1], rel=1e-12, abs=1e-14)
    assert result[1] == pytest.approx(1.0 - mirrored[0], rel=1e-12, abs=1e-14)


@settings(max_examples=examples(300))
@given(counts(max_trials=10**4))
def test_wilson_bounds_solve_the_score_equation(kn: tuple[int, int]) -> None:
    # The Wilson bounds are the roots p of (k/n - p)**2 = z**2 p (1 - p) / n.
    k, n = kn
    result = wilson_interval(k, n)
    assert result is not None
    for bound in result:
        lhs = (k / n - bound) ** 2
        rhs = Z95**2 * bound * (1 - bound) / n
        assert lhs == pytest.approx(rhs, rel=1e-8, abs=1e-18)


@settings(max_examples=examples(300))
@given(counts(max_trials=10**6).filter(lambda kn: kn[0] < kn[1]))
def test_wilson_bounds_increase_with_successes(kn: tuple[int, int]) -> None:
    k, n = kn
    this = wilson_interval(k, n)
    following = wilson_interval(k + 1, n)
    assert this is not None
    assert following is not None
    assert this[0] < following[0]
    assert this[1] < following[1]


@settings(max_examples=examples(300))
@given(counts(max_trials=10**5), st.integers(2, 10))
def test_wilson_narrows_with_more_trials_at_the_same_proportion(
    kn: tuple[int, int], factor: int
) -> None:
    # width(n) = 2z sqrt(p(1-p)n + z^2/4) / (n + z^2) strictly decreases in n for fixed p.
    k, n = kn
    small = wilson_interval(k, n)
    large = wilson_interval(factor * k, factor * n)
    assert small is not None
    assert large is not None
    assert large[1] - large[0] < small[1] - small[0]


@settings(max_examples=examples(200))
@given(counts(max_trials=10**5))
def test_wilson_widens_with_confidence(kn: tuple[int, int]) -> None:
    k, n = kn
    ninety = wilson_interval(k, n, z=norm.ppf(0.95))
    ninety_five = wilson_interval(k, n)
    assert ninety is not None
    assert ninety_five is not None
    assert ninety_five[0] <= ninety[0]
    assert ninety[1] <= ninety_five[1]
    assert ninety_five[1] - ninety_five[0] > ninety[1] - ninety[0]
    assert wilson_interval(k, n, z=Z95) == ninety_five


# --------------------------------------------------------------------------- kappa


def cells_of(table: Table) -> list[tuple[int, int, int]]:
    return [(i, j, count) for i, row in enumerate(table) for j, count in enumerate(row) if count]


def labels_of(table: Table) -> tuple[list[int], list[int]]:
    """Expand a table into the two raters' label lists (rows = rater 1)."""
    first: list[int] = []
    second: list[int] = []
    for i, j, count in cells_of(table):
        first += [i] * count
        second += [j] * count
    return first, second


def is_undefined(table: Table) -> bool:
    """Kappa is undefined with no pairs, or with all pairs in one diagonal cell (p_e = 1)."""
    nonzero = cells_of(table)
    return not nonzero or (len(nonzero) == 1 and nonzero[0][0] == nonzero[0][1])


def statsmodels_kappa(table: Table, weighting: str) -> tuple[float, float]:
    """(kappa, var_kappa) from statsmodels: the Fleiss-Cohen-Everitt variance."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if weighting == "none":
            result = cohens_kappa(np.array(table))
        else:
            # weights=None with wt="quadratic" uses scores np.arange(size): distances
            # (i - j)**2 / (size - 1)**2, i.e. the full-scale quadratic weights.
            result = cohens_kappa(np.array(table), wt="quadratic")
    return float(result.kappa), float(result.var_kappa)


@st.composite
def tables(draw: st.DrawFn, min_size: int = 2, max_size: int = 6) -> Table:
    size = draw(st.integers(min_size, max_size))
    count = st.one_of(st.just(0), st.integers(0, 30))
    return [[draw(count) for _ in range(size)] for _ in range(size)]


def flat(result: tuple[float, tuple[float, float], int] | None) -> tuple[float, float, float, int]:
    """(kappa, lower, upper, pairs), for pytest.approx, which does not nest."""
    assert result is not None
    kappa, (lower, upper), pairs = result
    return kappa, lower, upper, pairs


def check_interval_against_statsmodels(
    result: tuple[float, tuple[float, float], int],
    kappa: float,
    variance: float,
    z: float = Z95,
) -> None:
    """The interval is kappa -/+ z * statsmodels' std_kappa, clamped to [-1, 1].

    statsmodels' variance carries rounding noise of up to ~1e-13 (it can even be
    slightly negative when the true variance is 0), which sqrt turns into ~3e-7.
    So the bounds are compared to that tolerance, and the variance recovered from an
    unclamped bound is compared much more tightly.
    """
    value, (lower, upper), _ = result
    variance_noise = 1e-12
    half_width = z * math.sqrt(max(variance, 0.0))
    tolerance = z * math.sqrt(variance_noise)
    assert lower == pytest.approx(max(-1.0, kappa - half_width), rel=1e-9, abs=tolerance)
    assert upper == pytest.approx(min(1.0, kappa + half_width), rel=1e-9, abs=tolerance)
    if lower > -1.0 and z > 0:
        recovered = ((value - lower) / z) ** 2
        assert recovered == pytest.approx(max(variance, 0.0), rel=1e-8, abs=variance_noise)


@pytest.mark.parametrize("weighting", ["none", "quadratic"])
@settings(max_examples=examples(300), deadline=None)
@given(table=tables())
def test_kappa_matches_statsmodels(weighting: str, table: Table) -> None:
    size = len(table)
    result = cohen_kappa(cells_of(table), size, weighting)
    if is_undefined(table):
        assert result is None
        return
    assert result is not None
    kappa, variance = statsmodels_kappa(table, weighting)
    assert result[0] == pytest.approx(kappa, rel=1e-12, abs=1e-14)
    assert result[2] == sum(map(sum, table))
    check_interval_against_statsmodels(result, kappa, variance)
    lower, upper = result[1]
    assert -1.0 <= lower <= result[0] <= upper <= 1.0


@settings(max_examples=examples(300), deadline=None)
@given(table=tables())
def test_kappa_matches_sklearn(table: Table) -> None:
    size = len(table)
    assume(not is_undefined(table))
    first, second = labels_of(table)
    simple = cohen_kappa(cells_of(table), size, "none")
    quadratic = cohen_kappa(cells_of(table), size, "quadratic")
    assert simple is not None
    assert quadratic is not None
    assert simple[0] == pytest.approx(cohen_kappa_score(first, second), rel=1e-12, abs=1e-14)
    expected = cohen_kappa_score(first, second, weights="quadratic", labels=list(range(size)))
    assert quadratic[0] == pytest.approx(expected, rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("weighting", ["none", "quadratic"])
@settings(max_examples=examples(200), deadline=None)
@given(size=st.integers(1, 6), data=st.data())
def test_kappa_is_none_exactly_when_undefined(
    weighting: str, size: int, data: st.DataObject
) -> None:
    category = data.draw(st.integers(0, size - 1))
    pairs = data.draw(st.integers(1, 10**6))
    # All pairs in one diagonal cell: p_e = 1.
    assert cohen_kappa([(category, category, pairs)], size, weighting) is None
    # No pairs at all, or only zero cells.
    assert cohen_kappa([], size, weighting) is None
    assert cohen_kappa([(category, category, 0)], size, weighting) is None
    # One more pair anywhere else makes it defined.
    if size > 1:
        other = (category + 1) % size
        cells = [
            (category, category, pairs),
            data.draw(
                st.sampled_from([(other, other, 1), (category, other, 1), (other, category, 1)])
            ),
        ]
        assert cohen_kappa(cells, size, weighting) is not None


def test_kappa_of_one_category_scale_is_undefined() -> None:
    assert cohen_kappa([(0, 0, 7)], 1, "none") is None
    assert cohen_kappa([(0, 0, 7)], 1, "quadratic") is None


def test_kappa_hand_computed_2x2() -> None:
    # Table (rows = gold, cols = answers):   [[20,  5],
    #                                         [10, 15]]     n = 50
    # p_o = (20 + 15) / 50 = 0.7
    # r = (25/50, 25/50) = (0.5, 0.5);  c = (30/50, 20/50) = (0.6, 0.4)
    # p_e = 0.5*0.6 + 0.5*0.4 = 0.5;   kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4
    # Fleiss-Cohen-Everitt (1969), unweighted form:
    #   A = sum_i p_ii [1 - (r_i + c_i)(1 - kappa)]^2
    #     = 0.4 (1 - 1.1*0.6)^2 + 0.3 (1 - 0.9*0.6)^2 = 0.4*0.1156 + 0.3*0.2116 = 0.10972
    #   B = (1 - kappa)^2 sum_{i!=j} p_ij (c_i + r_j)^2
    #     = 0.36 [0.1 (0.6 + 0.5)^2 + 0.2 (0.4 + 0.5)^2] = 0.36 * 0.283 = 0.10188
    #   C = (kappa - p_e (1 - kappa))^2 = (0.4 - 0.3)^2 = 0.01
    #   var = (A + B - C) / (n (1 - p_e)^2) = 0.2016 / 12.5 = 0.016128, SE = 0.126996...
    #   interval = 0.4 -/+ 1.959964 * 0.126996 = 0.4 -/+ 0.248908
    cells = [(0, 0, 20), (0, 1, 5), (1, 0, 10), (1, 1, 15)]
    result = cohen_kappa(cells, 2, "none")
    assert result is not None
    kappa, (lower, upper), pairs = result
    assert kappa == pytest.approx(0.4, rel=1e-15)
    assert pairs == 50
    half_width = Z95 * math.sqrt(0.016128)
    assert lower == pytest.approx(0.4 - half_width, rel=1e-12)
    assert upper == pytest.approx(0.4 + half_width, rel=1e-12)
    assert (lower, upper) == pytest.approx((0.151092, 0.648908), abs=1e-6)
    # With two categories the quadratic weights are the identity: same answer.
    assert flat(cohen_kappa(cells, 2, "quadratic")) == pytest.approx(flat(result), rel=1e-12)


def test_kappa_hand_computed_3x3_quadratic() -> None:
    # Table [[2, 1, 0], [0, 2, 1], [1, 0, 3]], n = 10, distances d_ij = (i - j)^2.
    # Quadratic kappa = 1 - sum d_ij p_ij / sum d_ij r_i c_j (the 1/(size-1)^2 cancels).
    # Observed: cells (0,1), (1,2) at d = 1 and (2,0) at d = 4: (1 + 1 + 4) / 10 = 0.6.
    # r = c = (3, 3, 4) / 10. Expected:
    #   [1*3*3 + 4*3*4 + 1*3*3 + 1*3*4 + 4*4*3 + 1*4*3] / 100 = 138 / 100 = 1.38.
    # kappa = 1 - 0.6 / 1.38 = 78 / 138 = 13 / 23.
    table = [[2, 1, 0], [0, 2, 1], [1, 0, 3]]
    result = cohen_kappa(cells_of(table), 3, "quadratic")
    assert result is not None
    assert result[0] == pytest.approx(13 / 23, rel=1e-15)
    assert result[2] == 10
    # Unweighted: p_o = 7/10, p_e = (9 + 9 + 16)/100 = 0.34, kappa = 0.36/0.66 = 6/11.
    simple = cohen_kappa(cells_of(table), 3, "none")
    assert simple is not None
    assert simple[0] == pytest.approx(6 / 11, rel=1e-15)


@pytest.mark.parametrize("weighting", ["none", "quadratic"])
@settings(max_examples=examples(200), deadline=None)
@given(size=st.integers(1, 6), data=st.data())
def test_kappa_of_identical_raters_is_one(weighting: str, size: int, data: st.DataObject) -> None:
    labels = data.draw(st.lists(st.integers(0, size - 1), max_size=200))
    counts_by_label: dict[int, int] = {}
    for label in labels:
        counts_by_label[label] = counts_by_label.get(label, 0) + 1
    cells = [(label, label, count) for label, count in counts_by_label.items()]
    result = cohen_kappa(cells, size, weighting)
    if len(counts_by_label) <= 1:
        assert result is None
        return
    assert result is not None
    kappa, (lower, upper), pairs = result
    assert kappa == 1.0
    assert pairs == len(labels)
    # Perfect agreement has variance 0 (in floating point: ~0, perhaps slightly negative).
    assert math.isfinite(lower)
    assert upper == 1.0
    assert lower == pytest.approx(1.0, abs=1e-7)
    assert -1.0 <= lower <= 1.0


def test_kappa_zero_variance_cases_give_finite_intervals() -> None:
    # Perfect agreement: the variance is 0; rounding must not yield NaN or an error.
    perfect = cohen_kappa([(0, 0, 1), (1, 1, 1), (2, 2, 10**6)], 3, "none")
    assert perfect is not None
    assert perfect[0] == 1.0
    assert perfect[1] == pytest.approx((1.0, 1.0), abs=1e-7)
    assert all(math.isfinite(bound) for bound in perfect[1])
    # One rater uses one category: kappa = 0 with variance exactly 0 (statsmodels gives
    # a rounding residue of ~3e-16 here).
    for weighting in ("none", "quadratic"):
        one_sided = cohen_kappa([(0, 1, 3), (1, 1, 19)], 2, weighting)
        assert one_sided is not None
        kappa, interval, pairs = one_sided
        assert kappa == pytest.approx(0.0, abs=1e-15)
        assert interval == pytest.approx((0.0, 0.0), abs=1e-7)
        assert all(math.isfinite(bound) for bound in interval)
        assert pairs == 22


def test_kappa_interval_is_clamped_to_minus_one_one() -> None:
    # Small samples give half-widths beyond 1: the interval is clamped.
    result = cohen_kappa([(0, 0, 1), (0, 1, 1), (1, 0, 1)], 2, "none")
    assert result is not None
    kappa, (lower, upper), _ = result
    # p_o = 1/3, r = (2/3, 1/3), c = (2/3, 1/3), p_e = 5/9, kappa = (3/9 - 5/9)/(4/9) = -1/2.
    assert kappa == pytest.approx(-0.5, rel=1e-15)
    assert lower == -1.0
    assert -1.0 <= lower <= kappa <= upper <= 1.0


@pytest.mark.parametrize("weighting", ["none", "quadratic"])
@settings(max_examples=examples(100), deadline=None)
@given(table=tables(), data=st.data())
def test_kappa_ignores_cell_order_and_swapping_raters_keeps_it(
    weighting: str, table: Table, data: st.DataObject
) -> None:
    assume(not is_undefined(table))
    size = len(table)
    cells = cells_of(table)
    result = cohen_kappa(cells, size, weighting)
    shuffled = cohen_kappa(data.draw(st.permutations(cells)), size, weighting)
    transposed = cohen_kappa([(j, i, count) for i, j, count in cells], size, weighting)
    assert result is not None
    assert shuffled is not None
    assert transposed is not None
    assert flat(shuffled) == pytest.approx(flat(result), rel=1e-12, abs=1e-14)
    # Kappa and the Fleiss-Cohen-Everitt variance are symmetric in the two raters.
    assert transposed[0] == pytest.approx(result[0], rel=1e-12, abs=1e-14)
    assert transposed[1] == pytest.approx(result[1], rel=1e-9, abs=1e-7)


@settings(max_examples=examples(100), deadline=None)
@given(table=tables())
def test_kappa_z_controls_the_interval(table: Table) -> None:
    assume(not is_undefined(table))
    cells, size = cells_of(table), len(table)
    point = cohen_kappa(cells, size, "none", z=0.0)
    assert point is not None
    assert point[1] == (point[0], point[0])
    z99 = float(norm.ppf(0.995))
    wide = cohen_kappa(cells, size, "none", z=z99)
    kappa, variance = statsmodels_kappa(table, "none")
    assert wide is not None
    check_interval_against_statsmodels(wide, kappa, variance, z=z99)


def test_kappa_rejects_unknown_weighting() -> None:
    with pytest.raises(ValueError):
        cohen_kappa([(0, 0, 1), (1, 1, 1)], 2, "linear")
    with pytest.raises(ValueError):
        cohen_kappa([(0, 1, 1), (1, 0, 1)], 2, "Quadratic")


def test_kappa_accepts_a_generator_of_cells() -> None:
    table: Sequence[Sequence[int]] = [[20, 5], [10, 15]]
    cells = ((i, j, count) for i, row in enumerate(table) for j, count in enumerate(row))
    result = cohen_kappa(cells, 2, "none")
    assert result is not None
    assert result[0] == pytest.approx(0.4, rel=1e-15)
    assert result[2] == 50


@pytest.mark.parametrize(
    ("cells", "size", "weighting"),
    [
        ([(-1, 0, 5), (0, 0, 5)], 2, "none"),  # a negative index must not wrap around
        ([(0, 0, 5), (1, 1, -2), (0, 1, 1)], 2, "none"),  # negative count
        ([(0, 0, 5), (2, 1, 3)], 2, "none"),  # outside the table
        ([(0, 0, 5.0)], 2, "none"),  # counts are integers
        ([], 2, "bogus"),  # the weighting is checked even for an empty table
        ([(0, 0, 5), (1, 1, 5)], np.int64(2), "quadratic"),  # size must be a real int
        ([(0, 0, 1)], 0, "none"),
    ],
)
def test_kappa_refuses_malformed_tables(
    cells: list[tuple[int, int, int]], size: int, weighting: str
) -> None:
    with pytest.raises(ValueError):
        cohen_kappa(cells, size, weighting)


# --------------------------------------------------------------------------- kappa: closed form


def fraction_kappa(
    cells: Iterable[tuple[int, int, int]], size: int, weighting: str, z: float = Z95
) -> tuple[float, tuple[float, float], int] | None:
    """The previous implementation, kept as an oracle: every sum over all levels, in Fractions.

    It is O(size x levels used); the closed form must give identical floats.
    """
    table = [cell for cell in cells if cell[2]]
    n = sum(count for _, _, count in table)
    if n == 0:
        return None
    rows = [0] * size
    cols = [0] * size
    for i, j, count in table:
        rows[i] += count
        cols[j] += count
    quadratic = weighting == "quadratic"
    scale = max((size - 1) ** 2, 1) if quadratic else 1

    def distance(i: int, j: int) -> int:
        return (i - j) ** 2 if quadratic else int(i != j)

    used_rows = [i for i in range(size) if rows[i]]
    used_cols = [j for j in range(size) if cols[j]]
    observed_disagreement = sum(distance(i, j) * count for i, j, count in table)
    if weighting == "none":
        expected_disagreement = n * n - sum(rows[i] * cols[i] for i in range(size))
    else:
        expected_disagreement = sum(
            distance(i, j) * rows[i] * cols[j] for i in used_rows for j in used_cols
        )
    if expected_disagreement == 0:
        return None
    kappa = 1 - Fraction(observed_disagreement * n, expected_disagreement)
    p_e = 1 - Fraction(expected_disagreement, scale * n * n)

    def weight(i: int, j: int) -> Fraction:
        return 1 - Fraction(distance(i, j), scale)

    r = [Fraction(x, n) for x in rows]
    c = [Fraction(x, n) for x in cols]
    if weighting == "none":
        row_weight, col_weight = c, r
    else:
        row_weight = [
            sum((weight(i, j) * c[j] for j in used_cols), Fraction(0)) for i in range(size)
        ]
        col_weight = [
            sum((weight(i, j) * r[i] for i in used_rows), Fraction(0)) for j in range(size)
        ]
    spread = sum(
        (
            Fraction(count, n) * (weight(i, j) - (row_weight[i] + col_weight[j]) * (1 - kappa)) ** 2
            for i, j, count in table
        ),
        Fraction(0),
    )
    variance = (spread - (kappa - p_e * (1 - kappa)) ** 2) / (n * (1 - p_e) ** 2)
    assert variance >= 0  # exact arithmetic: a true variance, never negative
    value = float(kappa)
    half_width = z * math.sqrt(float(variance))
    return value, (max(-1.0, value - half_width), min(1.0, value + half_width)), n


@st.composite
def sparse_tables(draw: st.DrawFn) -> tuple[list[tuple[int, int, int]], int]:
    """A scale of 1..60 levels with a few occupied cells, sometimes on a few levels only."""
    size = draw(st.integers(1, 60))
    levels = draw(st.lists(st.integers(0, size - 1), min_size=1, max_size=6, unique=True))
    cells = draw(
        st.lists(
            st.tuples(st.sampled_from(levels), st.sampled_from(levels), st.integers(0, 10**6)),
            max_size=12,
            unique_by=lambda cell: cell[:2],
        )
    )
    return cells, size


@pytest.mark.parametrize("weighting", ["none", "quadratic"])
@settings(max_examples=examples(400), deadline=None)
@given(table=sparse_tables())
def test_closed_form_kappa_equals_the_fraction_oracle_exactly(
    weighting: str, table: tuple[list[tuple[int, int, int]], int]
) -> None:
    cells, size = table
    assert cohen_kappa(cells, size, weighting) == fraction_kappa(cells, size, weighting)


@pytest.mark.parametrize("weighting", ["none", "quadratic"])
@settings(max_examples=examples(200), deadline=None)
@given(table=tables(max_size=8))
def test_closed_form_kappa_equals_the_oracle_on_dense_tables(weighting: str, table: Table) -> None:
    cells, size = cells_of(table), len(table)
    assert cohen_kappa(cells, size, weighting) == fraction_kappa(cells, size, weighting)


def test_kappa_cost_does_not_grow_with_the_scale() -> None:
    # The closed form never loops over the scale: a 10^12-level scale with three occupied
    # levels is as cheap as a three-level one (the oracle would need 10^12 Fractions).
    cells = [(0, 0, 5), (10**6, 10**6, 3), (10**6, 10**12 - 1, 2), (10**12 - 1, 0, 1)]
    result = cohen_kappa(cells, 10**12, "quadratic")
    # The same table on the 3 levels used, rescaled: quadratic weights depend on the
    # positions, so only an oracle over the same positions can check it: Fractions on
    # the used levels with the full-scale weights.
    assert result is not None
    positions = [0, 10**6, 10**12 - 1]
    n = 11
    scale = (10**12 - 1) ** 2
    rows = {0: 5, 10**6: 5, 10**12 - 1: 1}
    cols = {0: 6, 10**6: 3, 10**12 - 1: 2}
    p_o = sum(Fraction(count, n) * (1 - Fraction((i - j) ** 2, scale)) for i, j, count in cells)
    p_e = sum(
        Fraction(rows[i] * cols[j], n * n) * (1 - Fraction((i - j) ** 2, scale))
        for i in positions
        for j in positions
    )
    assert result[0] == float((p_o - p_e) / (1 - p_e))
    assert result[2] == n


@pytest.mark.parametrize(
    ("table", "weighting"),
    [
        ([[3, 0], [0, 5]], "none"),  # perfect agreement
        ([[0, 3], [0, 19]], "none"),  # the answers use one category
        ([[0, 3], [0, 19]], "quadratic"),
        ([[2, 0, 0], [0, 0, 0], [0, 0, 1]], "quadratic"),
    ],
)
def test_zero_variance_gives_the_degenerate_interval(table: Table, weighting: str) -> None:
    # Exactly zero variance, in exact arithmetic: the interval is [kappa, kappa] (docs).
    result = cohen_kappa(cells_of(table), len(table), weighting)
    assert result is not None
    kappa, interval, _ = result
    assert interval == (kappa, kappa)


def test_zero_variance_even_with_one_pair_each() -> None:
    # Two pairs in two diagonal cells: kappa 1 with the interval [1, 1] at n = 2.
    assert cohen_kappa([(0, 0, 1), (1, 1, 1)], 2, "none") == (1.0, (1.0, 1.0), 2)


@pytest.mark.parametrize("weighting", ["none", "quadratic"])
def test_kappa_matches_statsmodels_on_a_large_ordinal_scale(weighting: str) -> None:
    # 40 levels, most of them unused: statsmodels builds the full table.
    rng = np.random.default_rng(7)
    size = 40
    table = [[0] * size for _ in range(size)]
    for _ in range(500):
        gold = int(rng.integers(10, 16))
        answer = min(size - 1, max(0, gold + int(rng.integers(-2, 3))))
        table[gold][answer] += 1
    result = cohen_kappa(cells_of(table), size, weighting)
    assert result is not None
    kappa, variance = statsmodels_kappa(table, weighting)
    assert result[0] == pytest.approx(kappa, rel=1e-12, abs=1e-14)
    check_interval_against_statsmodels(result, kappa, variance)
    assert result == fraction_kappa(cells_of(table), size, weighting)
