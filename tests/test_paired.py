"""chartscore.stats.paired checked against published vectors and independent oracles.

McNemar's exact test is checked against statsmodels; the mid-p value against an
independent computation in exact fractions; Newcombe's interval against the
published examples and an independent 50-digit Decimal implementation written
from the paper's formulas.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.contingency_tables import mcnemar as statsmodels_mcnemar

from chartscore.stats import paired
from chartscore.stats.binomial import Z95
from chartscore.stats.paired import mcnemar, newcombe_difference

from helpers import examples

# ---------------------------------------------------------------------- oracles


def fraction_p_values(b: int, c: int) -> tuple[Fraction, Fraction]:
    """McNemar exact and mid-p as exact fractions, straight from the definitions.

    Two-sided p-values by ordering outcomes on |X - n/2|: the exact p-value sums
    every outcome at least as extreme as the observed one; the mid-p value counts
    the outcomes exactly as extreme with weight one half (Lancaster's mid-p).
    """
    n = b + c
    total = Fraction(0)
    mid = Fraction(0)
    observed = abs(2 * b - n)
    for x in range(n + 1):
        p = Fraction(math.comb(n, x), 2**n)
        distance = abs(2 * x - n)
        if distance > observed:
            total += p
            mid += p
        elif distance == observed:
            total += p
            mid += p / 2
    return min(total, Fraction(1)), mid


def decimal_newcombe(a: int, b: int, c: int, d: int) -> tuple[Decimal, Decimal, Decimal]:
    """Newcombe (1998) method 10 in 50-digit decimal arithmetic, from the paper."""
    with localcontext() as ctx:
        ctx.prec = 50
        z = Decimal(repr(Z95))
        n = Decimal(a + b + c + d)

        def wilson(k: int) -> tuple[Decimal, Decimal]:
            p = Decimal(k) / n
            root = (z * z + 4 * n * p * (1 - p)).sqrt()
            denominator = 2 * (n + z * z)
            return (2 * n * p + z * z - z * root) / denominator, (
                2 * n * p + z * z + z * root
            ) / denominator

        p1, p2 = Decimal(a + b) / n, Decimal(a + c) / n
        l1, u1 = wilson(a + b)
        l2, u2 = wilson(a + c)
        if k_zero(a + b, a + c, b + d, c + d):
            phi = Decimal(0)
        else:
            numerator = Decimal(a * d - b * c)
            if numerator > 0:
                numerator = max(numerator - n / 2, Decimal(0))
            phi = numerator / (Decimal(a + b) * (c + d) * (a + c) * (b + d)).sqrt()
        theta = p1 - p2
        delta = ((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2).sqrt()
        epsilon = ((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2).sqrt()
        return theta, theta - delta, theta + epsilon


def k_zero(*margins: int) -> bool:
    return any(margin == 0 for margin in margins)


cells = st.integers(0, 60) | st.integers(0, 5000)


# ---------------------------------------------------------------------- McNemar


@pytest.mark.parametrize(
    ("b", "c", "exact", "mid"),
    [
        # Bentur et al. (Fagerland et al. 2013, supplementary material): exact 0.070,
        # mid-p 0.039. n = 8, P(X <= 1) = 9/256, P(X = 1) = 8/256.
        (1, 7, Fraction(18, 256), Fraction(10, 256)),
        (7, 1, Fraction(18, 256), Fraction(10, 256)),
        # n = 9: P(X <= 2) = 46/512, P(X = 2) = 36/512.
        (2, 7, Fraction(92, 512), Fraction(56, 512)),
        # Ties: exact 1, mid-p 1 - P(X = b) / 2.
        (3, 3, Fraction(1), 1 - Fraction(20, 64) / 2),
        (1, 1, Fraction(1), Fraction(3, 4)),
        # No discordant pairs: a point mass; mid-p = 1/2 (docs/metrics.md).
        (0, 0, Fraction(1), Fraction(1, 2)),
        # One discordant pair: exact min(1, 2 * 1/2) = 1, mid-p 1 - 1/2.
        (0, 1, Fraction(1), Fraction(1, 2)),
        # Cavo: b = 6, c = 16, n = 22.
        (
            6,
            16,
            Fraction(2 * sum(math.comb(22, k) for k in range(7)), 2**22),
            Fraction(2 * sum(math.comb(22, k) for k in range(7)) - math.comb(22, 6), 2**22),
        ),
    ],
)
def test_mcnemar_hand_computed(b: int, c: int, exact: Fraction, mid: Fraction) -> None:
    assert mcnemar(b, c) == (float(exact), float(mid))


def test_mcnemar_published_bentur_values_to_three_places() -> None:
    exact_p, mid_p = mcnemar(1, 7)
    assert round(exact_p, 3) == 0.070
    assert round(mid_p, 3) == 0.039


@pytest.mark.parametrize("b", range(41))
@pytest.mark.parametrize("c", [0, 1, 2, 5, 13, 40, 41])
def test_mcnemar_exact_matches_statsmodels(b: int, c: int) -> None:
    expected = statsmodels_mcnemar([[10, b], [c, 10]], exact=True).pvalue
    assert mcnemar(b, c)[0] == pytest.approx(expected, rel=1e-12, abs=1e-300)


@settings(max_examples=examples(300))
@given(st.integers(0, 3000), st.integers(0, 3000))
def test_mcnemar_exact_matches_statsmodels_large(b: int, c: int) -> None:
    expected = statsmodels_mcnemar([[0, b], [c, 0]], exact=True).pvalue
    # scipy's binomial cdf is accurate to a few ulps where it does not underflow.
    if expected > 1e-290:
        assert mcnemar(b, c)[0] == pytest.approx(expected, rel=1e-10)


@settings(max_examples=examples(300))
@given(st.integers(0, 150), st.integers(0, 150))
def test_both_p_values_are_the_rounded_exact_fractions(b: int, c: int) -> None:
    exact, mid = fraction_p_values(b, c)
    assert mcnemar(b, c) == (float(exact), float(mid))


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(0, 400), st.integers(0, 400))
def test_the_bounded_route_rounds_to_the_same_floats(b: int, c: int) -> None:
    # Force the fixed-point route on small tables and compare with exact fractions.
    exact, mid = fraction_p_values(b, c)
    n, m = b + c, min(b, c)
    result = paired._p_values(paired._bounded_sums(n, m), b == c)
    assert result is None or result == (float(exact), float(mid))
    # The bounds really are bounds.
    sums = paired._bounded_sums(n, m)
    unit = Fraction(2) ** sums.exponent
    tail = sum(Fraction(math.comb(n, k), 2**n) for k in range(m + 1))
    point = Fraction(math.comb(n, m), 2**n)
    assert sums.tail_low * unit <= tail <= sums.tail_high * unit
    assert sums.point_low * unit <= point <= sums.point_high * unit


@pytest.mark.parametrize(("b", "c"), [(3000, 3300), (2900, 2900), (5000, 4100), (12, 90000)])
def test_large_tables_take_the_bounded_route_and_round_exactly(b: int, c: int) -> None:
    n, m = b + c, min(b, c)
    assert m * n > paired._EXACT_WORK or m < 100
    term, tail = 1, 1
    for k in range(m):
        term = term * (n - k) // (k + 1)
        tail += term
    if b == c:
        expected = (1.0, (2 ** (n + 1) - term) / 2 ** (n + 1))
    else:
        expected = (2 * tail / 2**n, (2 * tail - term) / 2**n)
    assert mcnemar(b, c) == expected


def test_a_million_discordant_pairs_are_quick_enough_to_run() -> None:
    # Not a timing assertion: this would take minutes with exact sums of 10^6-bit numbers.
    exact_p, mid_p = mcnemar(500_000, 500_000)
    assert exact_p == 1.0
    # 1 - P(X = n/2) / 2 with P(X = n/2) ~ sqrt(2 / (pi n)) = 7.98e-4.
    assert mid_p == pytest.approx(1 - math.sqrt(2 / (math.pi * 10**6)) / 2, rel=1e-9)


@settings(max_examples=examples(500))
@given(st.integers(0, 2000), st.integers(0, 2000))
def test_p_value_properties(b: int, c: int) -> None:
    exact_p, mid_p = mcnemar(b, c)
    assert 0.0 <= mid_p <= exact_p <= 1.0
    assert mcnemar(c, b) == (exact_p, mid_p)
    if b == c:
        assert exact_p == 1.0


@pytest.mark.parametrize("bad", [-1, 1.0, True, None, "3"])
def test_mcnemar_refuses_non_counts(bad: object) -> None:
    with pytest.raises(ValueError, match="non-negative ints"):
        mcnemar(bad, 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-negative ints"):
        mcnemar(1, bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- Newcombe


def rounded(result: tuple[float, tuple[float, float]] | None) -> tuple[float, float, float]:
    assert result is not None
    theta, (low, high) = result
    return round(theta, 4), round(low, 4), round(high, 4)


def test_newcombe_cavo_example() -> None:
    # The Cavo table (Fagerland, Lydersen & Laake 2014; 2017, ch. 8), by Newcombe's method 10:
    # -0.0621 (-0.1186, -0.0046).
    assert rounded(newcombe_difference(59, 6, 16, 80)) == (-0.0621, -0.1186, -0.0046)


def test_newcombe_bentur_example() -> None:
    # Bentur et al. data (Fagerland, Lydersen & Laake 2014, Stat Med 33:2850-2875):
    # the Newcombe square-and-add interval -0.2857 (-0.507, -0.026).
    theta, (low, high) = newcombe_difference(1, 1, 7, 12) or (0.0, (0.0, 0.0))
    assert theta == -6 / 21
    assert (round(low, 3), round(high, 3)) == (-0.507, -0.026)
    assert rounded(newcombe_difference(1, 1, 7, 12)) == (-0.2857, -0.5069, -0.0256)


def test_newcombe_one_concordant_pair_each_way() -> None:
    # a = 1, d = 1: ad - bc = 1 = n/2, so the corrected phi is 0 and the interval is
    # sqrt(2) times the Wilson half-width for 1/2 either side: +-0.5734.
    assert rounded(newcombe_difference(1, 0, 0, 1)) == (0.0, -0.5734, 0.5734)


def test_the_phi_correction_matters_for_the_published_vectors() -> None:
    # Without the correction (raw phi) Cavo would give (-0.1174, -0.0059) and
    # (1, 0, 0, 1) a zero-width interval; the published values need it.
    assert paired._corrected_phi(1, 0, 0, 1) == 0.0
    assert paired._corrected_phi(59, 6, 16, 80) == pytest.approx(
        (59 * 80 - 6 * 16 - 161 / 2) / math.sqrt(65 * 96 * 75 * 86), rel=1e-15
    )


@pytest.mark.parametrize(
    ("table", "phi"),
    [
        # Any zero margin: phi is 0.
        ((0, 0, 5, 5), 0.0),  # the first system never succeeds (a + b = 0)
        ((5, 5, 0, 0), 0.0),  # the first always succeeds (c + d = 0)
        ((0, 5, 0, 5), 0.0),  # the second never succeeds (a + c = 0)
        ((5, 0, 5, 0), 0.0),  # the second always succeeds (b + d = 0)
        ((7, 0, 0, 0), 0.0),  # both always succeed: identical systems
        # Positive association below n/2: corrected to 0.
        ((2, 1, 1, 1), 0.0),  # ad - bc = 1 < n/2 = 2.5
        # Negative association is not corrected.
        ((0, 3, 2, 0), -1.0),  # ad - bc = -6, margins 3 * 2 * 2 * 3 = 36
        ((1, 4, 3, 2), (2 - 12) / math.sqrt(5 * 5 * 4 * 6)),
    ],
)
def test_phi_edge_cases(table: tuple[int, int, int, int], phi: float) -> None:
    assert paired._corrected_phi(*table) == pytest.approx(phi, abs=1e-15)


def test_zero_margin_tables_have_sensible_intervals() -> None:
    # Both systems succeed on all 10 rows: estimate 0, interval +-(1 - l) with l the
    # Wilson lower bound for 10/10, n / (n + z^2) = 0.7225.
    wilson_low = 10 / (10 + Z95**2)
    theta, (low, high) = newcombe_difference(10, 0, 0, 0) or (1.0, (0.0, 0.0))
    assert theta == 0.0
    assert low == pytest.approx(-(1 - wilson_low), rel=1e-12)
    assert high == pytest.approx(1 - wilson_low, rel=1e-12)
    # One system always right, the other always wrong: difference 1, upper bound 1, and
    # the lower bound is 1 minus both Wilson distances (phi = 0: margins are zero).
    theta, (low, high) = newcombe_difference(0, 10, 0, 0) or (0.0, (0.0, 0.0))
    assert theta == 1.0
    assert high == 1.0
    assert low == pytest.approx(1 - math.sqrt(2) * (1 - wilson_low), rel=1e-12)


def test_newcombe_no_trials_is_none() -> None:
    assert newcombe_difference(0, 0, 0, 0) is None


@pytest.mark.parametrize("bad", [-1, 2.0, False, None])
def test_newcombe_refuses_non_counts(bad: object) -> None:
    for position in range(4):
        args: list[object] = [1, 1, 1, 1]
        args[position] = bad
        with pytest.raises(ValueError, match="non-negative ints"):
            newcombe_difference(*args)  # type: ignore[arg-type]


@settings(max_examples=examples(400))
@given(cells, cells, cells, cells)
def test_newcombe_matches_a_decimal_implementation(a: int, b: int, c: int, d: int) -> None:
    result = newcombe_difference(a, b, c, d)
    if a + b + c + d == 0:
        assert result is None
        return
    assert result is not None
    theta, (low, high) = result
    expected = decimal_newcombe(a, b, c, d)
    assert theta == pytest.approx(float(expected[0]), abs=1e-12)
    assert low == pytest.approx(max(-1.0, float(expected[1])), abs=1e-12)
    assert high == pytest.approx(min(1.0, float(expected[2])), abs=1e-12)


@settings(max_examples=examples(500))
@given(cells, cells, cells, cells)
def test_newcombe_properties(a: int, b: int, c: int, d: int) -> None:
    result = newcombe_difference(a, b, c, d)
    if a + b + c + d == 0:
        return
    assert result is not None
    theta, (low, high) = result
    assert theta == (b - c) / (a + b + c + d)
    assert -1.0 <= low <= theta <= high <= 1.0
    # Swapping the two systems negates the estimate and mirrors the interval, exactly.
    swapped = newcombe_difference(a, c, b, d)
    assert swapped == (-theta, (-high, -low))


@settings(max_examples=examples(200))
@given(st.integers(0, 5000), st.integers(0, 5000))
def test_identical_systems_give_zero(a: int, d: int) -> None:
    if a + d == 0:
        return
    result = newcombe_difference(a, 0, 0, d)
    assert result is not None
    theta, (low, high) = result
    assert theta == 0.0
    assert low == -high
    assert low < 0.0 < high  # the interval is never degenerate with n > 0
    assert mcnemar(0, 0) == (1.0, 0.5)


def test_the_worked_examples_in_metrics_md_are_true() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "metrics.md").read_text("utf-8")
    section = text[text.index("## Paired comparison") : text.index("## Normalization")]
    # Cavo, candidate first: both 59, candidate only 6, baseline only 16, neither 80.
    theta, (low, high) = newcombe_difference(59, 6, 16, 80) or (0.0, (0.0, 0.0))
    assert f"| {theta:.4f} |".replace("-", "−") in section
    assert f"({low:.4f}, {high:.4f})".replace("-", "−") in section
    exact_p, mid_p = mcnemar(16, 6)
    assert f"| {exact_p:.4f} |" in section and f"| {mid_p:.4f} |" in section
    assert Fraction(exact_p) == Fraction(13757, 262144)
    # Bentur: the first-minus-second interval and the McNemar values.
    theta, (low, high) = newcombe_difference(1, 1, 7, 12) or (0.0, (0.0, 0.0))
    assert round(theta, 4) == -0.2857
    assert f"−0.2857 ({low:.4f}, {high:.4f})".replace("-", "−") in section
    assert f"+0.2857 ({-high:.4f}, {-low:.4f})" in section
    # The small example: baseline 41/50, candidate 46/50, b = 2, c = 7.
    _, (low, high) = newcombe_difference(39, 7, 2, 2) or (0.0, (0.0, 0.0))
    assert f"interval ({low:.4f}, {high:.4f})".replace("-", "−") in section
    assert mcnemar(2, 7) == (92 / 512, 56 / 512)
