"""Case-clustered statistics for pooled slices: integers in, floats out.

In the overall and field-type slices one chart contributes a row per field, and
the rows of one chart are correlated: a system that struggles with a chart
struggles with many of its fields. The contract's Wilson interval treats the
rows as independent; this module gives the honest interval beside it, with
cases as the clusters (docs/metrics.md, "Case-clustered intervals").

Everything is a pure function of exact per-case sums that add across
partitions (:class:`ClusterSums`, :class:`PairedClusterSums`), so the partial
tallies of the Dask engine, or of several sites, still merge exactly. Each
clustered figure is the plain figure's formula with ``z**2`` multiplied by a
*published design effect*: the exact design effect rounded **up** to two
significant digits and never below 1, so a clustered interval is never
narrower than the plain one and a document can be checked from its counts and
its design effects alone.

Value-free by construction: this module imports only ``stats`` and ``paired``.

References:
    L. Kish (1965), Survey Sampling, Wiley (the design effect); E. L. Korn,
    B. I. Graubard (1998), "Confidence intervals for proportions with small
    expected number of positive counts estimated from survey data", Survey
    Methodology 24(2):193-201 (an interval on the effective sample size);
    N. A. Obuchowski (1998), "On the comparison of correlated proportions for
    clustered data", Statistics in Medicine 17(13):1495-1507; V. L. Durkalski,
    Y. Y. Palesch, S. R. Lipsitz, P. F. Rust (2003), "Analysis of clustered
    matched-pair data", Statistics in Medicine 22(15):2417-2428.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from decimal import Context, Decimal, localcontext
from fractions import Fraction
from typing import Final

import attrs

from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.stats.binomial import wilson_interval
from chartscore.stats.paired import mcnemar, newcombe_difference
from chartscore.stats.student_t import PI, t_quantile

Interval = tuple[float, float]

CONFIDENCE_LEVELS: Final = (0.9, 0.95, 0.99)
"""The confidence levels a run may ask for (``--confidence``); 0.95 is the default."""

DEFAULT_CONFIDENCE: Final = 0.95

Z_BY_CONFIDENCE: Final = {
    0.9: 1.6448536269514715,
    0.95: 1.9599639845400536,
    0.99: 2.5758293035489,
}
"""Two-sided normal quantiles ``z = NormalDist().inv_cdf(1 - (1 - level) / 2)``.

Written as literals so that every platform uses the same bits (``inv_cdf``
calls the C library's ``log``). 0.95 gives :data:`chartscore.stats.Z95`;
docs/metrics.md states how far each is from the true quantile.
"""

DESIGN_EFFECT_DIGITS: Final = 2
"""Published design effects are rounded up to this many significant digits."""

MINORITY_CASES: Final = 10
"""Below this many charts holding the less common outcome, the design effect is at least the
worst case.

A sample that misses the few charts where failures sit has a high rate *and* a
small estimated design effect; with fewer than 10 such charts the spread over
charts cannot be estimated (docs/metrics.md, "Case-clustered intervals").
"""

CONFIDENCE_BY_Z: Final = {z: level for level, z in Z_BY_CONFIDENCE.items()}
"""The confidence level of each of the three normal quantiles."""


def z_for(confidence: float) -> float:
    """The two-sided normal quantile of one of :data:`CONFIDENCE_LEVELS`.

    Raises:
        ValueError: for any other level (callers turn it into ``usage``).
    """
    if type(confidence) is not float or confidence not in Z_BY_CONFIDENCE:
        raise ValueError("confidence must be 0.9, 0.95 or 0.99")
    return Z_BY_CONFIDENCE[confidence]


def confidence_option(value: object) -> float:
    """``value`` when it is exactly a float and one of :data:`CONFIDENCE_LEVELS`.

    Raises:
        ChartscoreError: ``usage`` for anything else (checked by exact type).
    """
    if type(value) is not float or value not in Z_BY_CONFIDENCE:
        raise ChartscoreError(ErrorCode.USAGE)
    return value


# --------------------------------------------------------------------------- sums


@attrs.frozen
class ClusterSums:
    """Per-case sums behind one binomial metric of a pooled slice.

    Case ``i`` has ``y_i`` successes in ``m_i`` trials. ``cases`` counts the
    cases with ``m_i > 0``; the sums run over every case. ``success_cases``
    counts the cases with a success (``y_i > 0``) and ``failure_cases`` those
    with a failure (``y_i < m_i``). ``sum_yy``, ``sum_ym`` and the two case
    counts are None when the per-case successes are not known (a gold-only
    figure such as a pooled ``majority_baseline``): then only the worst case,
    every row of a case agreeing, can be used. The two case counts alone are
    None in sums read from a format 1 partial, which did not record them: the
    design effect is then at least the worst case.
    """

    cases: int
    sum_yy: int | None
    sum_ym: int | None
    sum_mm: int
    success_cases: int | None
    failure_cases: int | None

    def __attrs_post_init__(self) -> None:
        known = (self.sum_yy, self.sum_ym, self.success_cases, self.failure_cases)
        if any(type(v) is not int or v < 0 for v in (self.cases, self.sum_mm)):
            raise ValueError("cluster sums must be non-negative ints")
        if (self.sum_yy is None) != (self.sum_ym is None):
            raise ValueError("sum_yy and sum_ym are known together")
        if (self.success_cases is None) != (self.failure_cases is None):
            raise ValueError("the cases with each outcome are known together")
        if self.sum_yy is None and self.success_cases is not None:
            raise ValueError("cases with an outcome need the per-case successes")
        if any(v is not None and (type(v) is not int or v < 0) for v in known):
            raise ValueError("cluster sums must be non-negative ints")
        if any(v is not None and v > self.cases for v in known[2:]):
            raise ValueError("more cases with an outcome than cases")

    @property
    def known(self) -> bool:
        """Whether the per-case successes are known (not a gold-only figure)."""
        return self.sum_yy is not None

    def __add__(self, other: ClusterSums) -> ClusterSums:
        """The sums of two disjoint sets of cases."""
        cases, sum_mm = self.cases + other.cases, self.sum_mm + other.sum_mm
        if not (self.known and other.known):
            return ClusterSums(cases, None, None, sum_mm, None, None)
        assert self.sum_yy is not None and self.sum_ym is not None
        assert other.sum_yy is not None and other.sum_ym is not None
        sum_yy, sum_ym = self.sum_yy + other.sum_yy, self.sum_ym + other.sum_ym
        if self.minority_cases is None or other.minority_cases is None:
            return ClusterSums(cases, sum_yy, sum_ym, sum_mm, None, None)
        return ClusterSums(
            cases,
            sum_yy,
            sum_ym,
            sum_mm,
            self.success_cases + other.success_cases,  # type: ignore[operator]
            self.failure_cases + other.failure_cases,  # type: ignore[operator]
        )

    @property
    def minority_cases(self) -> int | None:
        """The cases holding the less common outcome: ``min(success_cases, failure_cases)``."""
        if self.success_cases is None or self.failure_cases is None:
            return None
        return min(self.success_cases, self.failure_cases)


@attrs.frozen
class PairedClusterSums:
    """Per-case sums behind one paired metric of a pooled slice.

    Case ``i`` has ``m_i`` paired trials and a difference ``d_i = c_i - b_i``
    (its trials where only the candidate succeeded, minus those where only
    the baseline did). ``by_size`` holds, for each trial count ``m`` that
    occurs, ``(m, cases, sum of d_i, sum of d_i**2)`` over the cases with
    ``m_i = m``, sorted by ``m``: every other sum follows from it, and sizes
    add across partitions.
    """

    by_size: tuple[tuple[int, int, int, int], ...]

    def __attrs_post_init__(self) -> None:
        sizes = [entry[0] for entry in self.by_size]
        if sizes != sorted(set(sizes)):
            raise ValueError("by_size must be sorted by distinct sizes")
        for size, cases, sum_d, sum_dd in self.by_size:
            if any(type(v) is not int for v in (size, cases, sum_d, sum_dd)):
                raise ValueError("paired cluster sums must be ints")
            if size < 1 or cases < 1 or sum_dd < 0 or abs(sum_d) > size * cases:
                raise ValueError("paired cluster sums out of range")

    @classmethod
    def of(cls, entries: Iterable[tuple[int, int, int, int]]) -> PairedClusterSums:
        """Sum entries ``(m, cases, sum_d, sum_dd)`` by size (any order, repeats added)."""
        totals: dict[int, list[int]] = {}
        for size, cases, sum_d, sum_dd in entries:
            if cases == 0:
                continue
            total = totals.setdefault(size, [0, 0, 0])
            total[0] += cases
            total[1] += sum_d
            total[2] += sum_dd
        return cls(tuple((size, *totals[size]) for size in sorted(totals)))  # type: ignore[misc]

    def __add__(self, other: PairedClusterSums) -> PairedClusterSums:
        """The sums of two disjoint sets of cases."""
        return PairedClusterSums.of((*self.by_size, *other.by_size))

    @property
    def cases(self) -> int:
        """Cases with at least one paired trial."""
        return sum(entry[1] for entry in self.by_size)

    @property
    def sum_mm(self) -> int:
        """The sum of ``m_i**2``."""
        return sum(size * size * cases for size, cases, _, _ in self.by_size)

    @property
    def sum_dm(self) -> int:
        """The sum of ``d_i m_i``."""
        return sum(size * sum_d for size, _, sum_d, _ in self.by_size)

    @property
    def sum_dd(self) -> int:
        """The sum of ``d_i**2``."""
        return sum(entry[3] for entry in self.by_size)


# --------------------------------------------------------------------------- one rate


def worst_case_design_effect(trials: int, sum_mm: int) -> Fraction:
    """``sum m_i**2 / M``: the design effect when every row of a case agrees (rho = 1)."""
    return Fraction(sum_mm, trials)


def design_effect(successes: int, trials: int, sums: ClusterSums) -> Fraction | None:
    """The exact design effect of a pooled rate: its ratio variance over the row-wise one.

    With ``C`` cases, ``Y = sum y_i`` successes, ``M = sum m_i`` trials and
    ``p = Y / M``, the ratio estimator's variance with cases as the primary
    sampling units, and the same formula with every row its own case, are::

        V_case = C / (C - 1) * sum_i (y_i - p m_i)**2 / M**2
        V_row  = M / (M - 1) * p (1 - p) / M

    and the design effect is ``V_case / V_row``, evaluated exactly from the
    sums (``sum (y_i - p m_i)**2 = S_yy - 2 p S_ym + p**2 S_mm``). When the
    data cannot estimate it (fewer than 2 cases, ``p`` at 0 or 1, per-case
    successes unknown) it is the worst case, :func:`worst_case_design_effect`;
    when the less common outcome occurs in fewer than :data:`MINORITY_CASES`
    cases, the larger of the two (a sample that missed the charts where the
    failures sit would otherwise look unclustered).

    Returns:
        The exact design effect, or None when there are no trials.
    """
    if trials == 0:
        return None
    worst = worst_case_design_effect(trials, sums.sum_mm)
    y, m, c = successes, trials, sums.cases
    minority = sums.minority_cases
    if sums.sum_yy is None or sums.sum_ym is None or c < 2 or y in (0, m):
        return worst
    spread = sums.sum_yy * m * m - 2 * y * m * sums.sum_ym + y * y * sums.sum_mm
    estimate = Fraction(c * (m - 1) * spread, (c - 1) * m * m * y * (m - y))
    if minority is None or minority < MINORITY_CASES:  # None: not recorded (format 1 partial)
        return max(estimate, worst)
    return estimate


def published_design_effect(exact: Fraction | None) -> float | None:
    """The design effect a document shows: rounded **up** to two significant digits, at least 1.

    Rounding up can only widen an interval. The grid is 1.0, 1.1, ..., 9.9,
    10, 11, ..., 99, 100, 110, ...; the float is the one nearest that decimal.
    """
    if exact is None:
        return None
    if exact <= 1:
        return 1.0
    exponent = len(str(math.floor(exact))) - 1  # 10**exponent <= exact < 10**(exponent + 1)
    step = Fraction(10) ** (exponent - DESIGN_EFFECT_DIGITS + 1)
    steps = math.ceil(exact / step)
    return float(Decimal(steps).scaleb(exponent - DESIGN_EFFECT_DIGITS + 1))


def is_published_design_effect(value: float) -> bool:
    """Whether ``value`` lies on the published grid (at least 1, two significant digits)."""
    if type(value) is not float or not math.isfinite(value) or value < 1:
        return False
    digits = Decimal(repr(value)).normalize().as_tuple().digits
    return len(digits) <= DESIGN_EFFECT_DIGITS


def widened(z: float, design_effect_shown: float) -> float:
    """The quantile of a clustered figure: ``z * sqrt(design effect)``.

    Multiplying ``z**2`` by the design effect is a Wilson (or Newcombe)
    interval on the effective sample size ``n / design effect``.
    """
    return z * math.sqrt(design_effect_shown)


def cluster_quantile(z: float, cases: int | None) -> float | None:
    """The quantile of a clustered figure over ``cases`` charts, at ``z``'s confidence level.

    Student's t with ``cases - 1`` degrees of freedom: the variance is
    estimated from the spread over that many charts. None with fewer than 2
    charts, where no spread can be estimated (the interval is then [0, 1]).
    ``cases`` None keeps ``z``: the rule of documents written before the
    case counts were published (report format 2, comparison format 1).
    """
    if cases is None:
        return z
    if cases < 2:
        return None
    return t_quantile(CONFIDENCE_BY_Z[z], cases - 1)


def _contain(inner: Interval, outer: Interval) -> Interval:
    # A clustered interval holds the plain one bit for bit, whatever the rounding.
    return (min(inner[0], outer[0]), max(inner[1], outer[1]))


def clustered_wilson(
    successes: int, trials: int, design_effect_shown: float, z: float, *, cases: int | None
) -> Interval | None:
    """The Wilson interval with its quantile's square times the published design effect.

    The quantile is :func:`cluster_quantile`'s (Student's t over ``cases - 1``
    degrees of freedom); with fewer than 2 cases the interval is [0, 1]. When
    every case has one trial (``cases == trials``) the rows are the cases and
    it is the plain Wilson interval. It always contains the plain Wilson
    interval of the same counts. None with no trials.
    """
    plain = wilson_interval(successes, trials, z)
    if plain is None or cases == trials:
        return plain
    quantile = cluster_quantile(z, cases)
    if quantile is None:
        return (0.0, 1.0)
    wide = wilson_interval(successes, trials, widened(quantile, design_effect_shown))
    assert wide is not None
    return _contain(plain, wide)


# --------------------------------------------------------------------------- paired


def difference_design_effect(
    baseline_only: int, candidate_only: int, trials: int, sums: PairedClusterSums
) -> Fraction | None:
    """The exact design effect of a pooled paired difference (Obuchowski's variance).

    With ``D = c - b``, ``M`` paired trials and ``theta = D / M``, the ratio
    variance of the difference with cases as clusters (Obuchowski 1998), and
    the same with every row its own case, are::

        V_case = C / (C - 1) * sum_i (d_i - theta m_i)**2 / M**2
        V_row  = M / (M - 1) * ((b + c) / M - theta**2) / M

    and the design effect is their ratio. The worst case (``sum m_i**2 / M``)
    stands in when it cannot be estimated: fewer than 2 cases, or no spread
    in the row-wise differences (no discordant rows, or all in one direction).

    Returns:
        The exact design effect, or None when there are no trials.
    """
    if trials == 0:
        return None
    worst = worst_case_design_effect(trials, sums.sum_mm)
    d, m, c = candidate_only - baseline_only, trials, sums.cases
    row_spread = m * (baseline_only + candidate_only) - d * d  # M * sum_rows (d_r - theta)**2
    if c < 2 or m < 2 or row_spread == 0:
        return worst
    spread = sums.sum_dd * m * m - 2 * d * m * sums.sum_dm + d * d * sums.sum_mm
    return Fraction(c * (m - 1) * spread, (c - 1) * m * m * row_spread)


def clustered_newcombe(
    both: int,
    first_only: int,
    second_only: int,
    neither: int,
    *,
    design_effect_shown: float,
    z: float,
    cases: int | None,
) -> Interval | None:
    """Newcombe's paired interval with its quantile's square times the published design effect.

    Arguments are :func:`chartscore.stats.paired.newcombe_difference`'s; the
    quantile is :func:`cluster_quantile`'s over ``cases`` charts (with fewer
    than 2, the interval is [-1, 1]; with one trial a case, the plain Newcombe
    interval). The result contains the plain Newcombe interval. None with no
    trials.
    """
    plain = newcombe_difference(both, first_only, second_only, neither, z)
    if plain is None:
        return None
    if cases == both + first_only + second_only + neither:
        return plain[1]
    quantile = cluster_quantile(z, cases)
    if quantile is None:
        return (-1.0, 1.0)
    wide = newcombe_difference(
        both, first_only, second_only, neither, widened(quantile, design_effect_shown)
    )
    assert wide is not None
    return _contain(plain[1], wide[1])


def durkalski_statistic(sums: PairedClusterSums) -> Fraction | None:
    """Durkalski et al.'s (2003) clustered McNemar statistic, exactly.

    Each case weighs the same: with ``w_i = d_i / m_i`` (the case's
    difference in discordant proportions)::

        X2 = (sum_i w_i)**2 / sum_i w_i**2     (chi-square, 1 df, under H0)

    It equals McNemar's ``(b - c)**2 / (b + c)`` when every case has one
    trial. None when no case has a discordant trial.
    """
    total = Fraction(0)
    squares = Fraction(0)
    for size, _, sum_d, sum_dd in sums.by_size:
        total += Fraction(sum_d, size)
        squares += Fraction(sum_dd, size * size)
    if squares == 0:
        return None
    return total * total / squares


def obuchowski_statistic(sums: PairedClusterSums) -> Fraction | None:
    """Obuchowski's (1998) clustered statistic under H0, in Yang et al.'s (2010) form.

    ``X2 = (C - 1) / C * (sum_i d_i)**2 / sum_i d_i**2``. None without a
    discordant trial. Given for reference and tests; reports use
    :func:`durkalski_statistic`.
    """
    c = sums.cases
    if sums.sum_dd == 0 or c == 0:
        return None
    d = sum(entry[2] for entry in sums.by_size)
    return Fraction((c - 1) * d * d, c * sums.sum_dd)


def mcnemar_design_effect(
    baseline_only: int, candidate_only: int, sums: PairedClusterSums
) -> Fraction | None:
    """McNemar's statistic over Durkalski's: the design effect of the paired test.

    None when either statistic is 0 or undefined (no discordant trial, equal
    discordant counts, or case weights that cancel): the clustered p-value is
    then 1.
    """
    b, c = baseline_only, candidate_only
    clustered = durkalski_statistic(sums)
    if b == c or clustered is None or clustered == 0:
        return None
    return Fraction((c - b) ** 2, b + c) / clustered


def clustered_mcnemar_p(
    baseline_only: int, candidate_only: int, design_effect_shown: float | None
) -> float:
    """The clustered McNemar p-value from the counts and the published design effect.

    ``p = max(mid-p, Q(X2_McNemar / design effect))`` where ``Q`` is the
    chi-square (1 df) survival function: never smaller than the plain mid-p
    (asymptotic tests are anti-conservative on few discordant pairs), and 1
    when the design effect is None.
    """
    if design_effect_shown is None:
        return 1.0
    b, c = baseline_only, candidate_only
    statistic = Fraction((c - b) ** 2, b + c) / Fraction(design_effect_shown)
    return max(mcnemar(b, c)[1], chi_square_1_survival(statistic))


# --------------------------------------------------------------------------- chi-square


def chi_square_1_survival(statistic: Fraction) -> float:
    """``P(X > x)`` for ``X`` chi-square with 1 degree of freedom: ``erfc(sqrt(x / 2))``.

    Evaluated in decimal arithmetic with at least 40 significant digits to
    spare, then rounded once to the nearest float, so every platform gives the
    same bits (``math.erfc`` is the C library's and may differ by an ulp).
    Small arguments use the Taylor series of erf, larger ones the continued
    fraction of erfc.
    """
    if statistic < 0:
        raise ValueError("a chi-square statistic is non-negative")
    if statistic == 0:
        return 1.0
    half = statistic / 2
    context = Context(prec=60)
    with localcontext(context):
        t = (Decimal(half.numerator) / Decimal(half.denominator)).sqrt()
        if t > 700:  # erfc(t) < 1e-200000: far below the smallest float
            return 0.0
        value = 1 - _erf_series(t, context) if t < 3 else _erfc_fraction(t, context)
        return float(value)


def _erf_series(t: Decimal, context: Context) -> Decimal:
    # erf(t) = 2 / sqrt(pi) * sum_n (-1)**n t**(2n+1) / (n! (2n+1)); for t < 3 the largest
    # term is below e**9 < 10**4, so 60 digits leave 55 after cancellation.
    term = t
    total = t
    square = t * t
    n = 0
    while True:
        n += 1
        term = -term * square / n
        part = term / (2 * n + 1)
        total += part
        if abs(part) < Decimal(10) ** -70:
            break
    return 2 * total / PI.sqrt(context)


def _erfc_fraction(t: Decimal, context: Context) -> Decimal:
    # erfc(t) = exp(-t**2) / sqrt(pi) * 1 / (t + (1/2) / (t + 1 / (t + (3/2) / (t + ...)))),
    # evaluated bottom-up with enough terms for t >= 3 (the tail shrinks like k / t**2).
    terms = 400
    tail = t
    for k in range(terms, 0, -1):
        tail = t + Decimal(k) / 2 / tail
    return (-(t * t)).exp(context) / PI.sqrt(context) / tail
