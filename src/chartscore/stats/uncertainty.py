"""Declared uncertainty as a predictor of agreement: AUROC, Brier score, risk and coverage.

An evidence chain declares an ``uncertainty`` in [0, 1]. Over a field's answered
answerable rows that carry one, the target is normalized agreement (1 when the
answer agrees with gold) and the forecast is ``1 - uncertainty``. Everything
here is a function of exact sufficient statistics that add across partitions
(:class:`UncertaintySums`), so a document can be checked from its numbers
(docs/metrics.md, "Declared uncertainty").

The AUROC's interval is DeLong's: its variance from the structural
components (placement values) of every row, which depend only on the row's
declared uncertainty and class, so per-uncertainty counts are enough and merge
across partitions; on the logit scale, which keeps it inside (0, 1) and holds
its level when the AUROC is high (docs/metrics.md, "Declared uncertainty").

Value-free: counts, exact sums and figures; imports only ``stats`` and ``student_t``.

References:
    E. R. DeLong, D. M. DeLong, D. L. Clarke-Pearson (1988), "Comparing the
    areas under two or more correlated receiver operating characteristic
    curves: a nonparametric approach", Biometrics 44(3):837-845; J. A. Hanley,
    B. J. McNeil (1982), "The meaning and use of the area under a receiver
    operating characteristic (ROC) curve", Radiology 143(1):29-36;
    G. W. Brier (1950), "Verification of forecasts expressed in terms of
    probability", Monthly Weather Review 78(1):1-3; R. El-Yaniv, Y. Wiener
    (2010), "On the foundations of noise-free selective classification",
    JMLR 11:1605-1641 (risk and coverage).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Final

import attrs

from chartscore.stats.binomial import wilson_rate_interval
from chartscore.stats.student_t import t_for

DECILES: Final = 10
"""Risk-coverage steps: the most certain tenth of the rows, two tenths, ..., all of them."""


@attrs.frozen
class UncertaintySums:
    """What the uncertainty figures of one field are computed from.

    Attributes:
        agreed: Rows with an uncertainty whose answer agrees (positives).
        disagreed: Rows with an uncertainty whose answer does not.
        ranked_twice: ``2 C + T`` over every (agreed, disagreed) pair of rows,
            ``C`` the pairs where the agreed row declared the lower
            uncertainty, ``T`` the ties: twice the Mann-Whitney count.
        brier_sum: The exact sum of ``(1 - uncertainty - agreed)**2``.
        kept: For each decile ``k = 1..10``, ``(agreed, rows)`` among the rows
            whose uncertainty is at most the ``k / 10`` quantile.
        without: Answered answerable rows that declared no uncertainty.
        delong_variance: DeLong's variance of the AUROC, exactly
            (:func:`delong_variance`); None with fewer than 2 rows in a class,
            or when the sums were read from a document (which publishes the
            standard error instead).
    """

    agreed: int
    disagreed: int
    ranked_twice: int
    brier_sum: Fraction
    kept: tuple[tuple[int, int], ...]
    without: int
    delong_variance: Fraction | None = attrs.field(default=None, eq=False)

    def __attrs_post_init__(self) -> None:
        counts = (self.agreed, self.disagreed, self.ranked_twice, self.without)
        if any(type(v) is not int or v < 0 for v in counts):
            raise ValueError("counts must be non-negative ints")
        if not consistent(self):
            raise ValueError("uncertainty sums are inconsistent")

    @property
    def rows(self) -> int:
        """Rows with an uncertainty."""
        return self.agreed + self.disagreed

    @classmethod
    def of(cls, rows: Iterable[tuple[Fraction, bool, int]], without: int) -> UncertaintySums:
        """The sums of ``(uncertainty, agreed, rows)`` (any order, repeats added)."""
        listed = list(rows)
        scale = math.lcm(1, *(u.denominator for u, _, _ in listed))
        return cls.scaled(((int(u * scale), a, n) for u, a, n in listed), scale, without)

    @classmethod
    def scaled(
        cls, rows: Iterable[tuple[int, bool, int]], scale: int, without: int
    ) -> UncertaintySums:
        """:meth:`of` with every uncertainty given as an integer times ``1 / scale``.

        Integer arithmetic throughout (a field may declare thousands of distinct
        uncertainties); the Brier sum is divided by ``scale**2`` once.
        """
        table: dict[int, list[int]] = {}
        for uncertainty, agreed, count in rows:
            entry = table.setdefault(uncertainty, [0, 0])
            entry[0 if agreed else 1] += count
        levels = sorted(table)
        positives = sum(table[u][0] for u in levels)
        negatives = sum(table[u][1] for u in levels)
        ranked = 0
        below = 0  # disagreed rows with a strictly higher uncertainty, scanned from the top
        for u in reversed(levels):
            up, down = table[u]
            ranked += up * (2 * below + down)
            below += down
        # An agreeing row's forecast error is u (1 - (1 - u)), a disagreeing row's 1 - u.
        brier = sum(table[u][0] * u * u + table[u][1] * (scale - u) ** 2 for u in levels)
        kept = _deciles(levels, table)
        variance = delong_variance([table[u] for u in levels])
        brier_sum = Fraction(brier, scale * scale)
        return cls(positives, negatives, ranked, brier_sum, kept, without, variance)


def delong_variance(counts: list[list[int]]) -> Fraction | None:
    """DeLong's variance of the AUROC from ``[agreed, disagreed]`` per uncertainty, ascending.

    A row's placement value is the share of the other class it is ranked
    against favourably, ties counting one half: for an agreeing row at
    uncertainty ``u``, ``V10 = (disagreeing rows above u + 1/2 those at u) / n0``;
    for a disagreeing row, ``V01 = (agreeing rows below u + 1/2 those at u) / n1``.
    Both average to the AUROC ``A``, and::

        Var(A) = S10 / n1 + S01 / n0,   S10 = sum (V10 - A)**2 / (n1 - 1), S01 likewise

    (DeLong et al. 1988), exactly in integers and one division. None with fewer
    than 2 rows in either class, where no spread can be estimated.
    """
    n1 = sum(a for a, _ in counts)
    n0 = sum(d for _, d in counts)
    if n1 < 2 or n0 < 2:
        return None
    below = 0  # agreeing rows with a lower uncertainty
    above = n0  # disagreeing rows with a higher uncertainty, before this level is taken out
    ranked = positive_squares = negative_squares = 0
    for agreed, disagreed in counts:
        above -= disagreed
        twice_v10 = 2 * above + disagreed  # 2 n0 V10 of an agreeing row here
        twice_v01 = 2 * below + agreed  # 2 n1 V01 of a disagreeing row here
        ranked += agreed * twice_v10
        positive_squares += agreed * twice_v10 * twice_v10
        negative_squares += disagreed * twice_v01 * twice_v01
        below += agreed
    auroc = Fraction(ranked, 2 * n1 * n0)
    s10 = (Fraction(positive_squares, 4 * n0 * n0) - n1 * auroc * auroc) / (n1 - 1)
    s01 = (Fraction(negative_squares, 4 * n1 * n1) - n0 * auroc * auroc) / (n0 - 1)
    return s10 / n1 + s01 / n0


def _deciles(levels: list[int], table: dict[int, list[int]]) -> tuple[tuple[int, int], ...]:
    # The k/10 quantile is the smallest uncertainty u with at least k n / 10 rows at or below u.
    n = sum(a + d for a, d in table.values())
    if n == 0:
        return tuple((0, 0) for _ in range(DECILES))
    out = []
    seen = agreed = 0
    index = 0
    for k in range(1, DECILES + 1):
        while 10 * seen < k * n:
            a, d = table[levels[index]]
            seen += a + d
            agreed += a
            index += 1
        out.append((agreed, seen))
    return tuple(out)


def consistent(sums: UncertaintySums) -> bool:
    """Whether the sums could come from real rows (a check on documents)."""
    n = sums.rows
    if len(sums.kept) != DECILES or sums.ranked_twice > 2 * sums.agreed * sums.disagreed:
        return False
    if not 0 <= sums.brier_sum <= n:
        return False
    before = (0, 0)
    for agreed, rows in sums.kept:
        if type(agreed) is not int or type(rows) is not int or not 0 <= agreed <= rows:
            return False
        if agreed < before[0] or rows < before[1] or rows - agreed < before[1] - before[0]:
            return False
        before = (agreed, rows)
    return before == (sums.agreed, n) and (n == 0 or sums.kept[0][1] > 0)


def auroc(sums: UncertaintySums) -> float | None:
    """``(C + T / 2) / (agreed * disagreed)``: the AUROC of ``1 - uncertainty``.

    None when either class is empty.

    The probability that a random agreed row declared less uncertainty than a
    random disagreed one, ties counting one half (scikit-learn's
    ``roc_auc_score(agreed, 1 - uncertainty)``). Correctly rounded.
    """
    pairs = sums.agreed * sums.disagreed
    return None if pairs == 0 else float(Fraction(sums.ranked_twice, 2 * pairs))


STANDARD_ERROR_DIGITS: Final = 2
"""A published AUROC standard error is rounded up to this many significant digits."""


def published_standard_error(variance: Fraction | None) -> float | None:
    """``sqrt(variance)`` rounded **up** to two significant digits (0 for 0); None for None.

    Like a design effect, a coarse upward rounding: the interval can only
    widen, and the quadratic aggregate it reveals stays coarse.
    """
    if variance is None:
        return None
    if variance == 0:
        return 0.0
    with localcontext() as context:
        context.prec = 40
        root = (Decimal(variance.numerator) / Decimal(variance.denominator)).sqrt()
        exponent = root.adjusted() - STANDARD_ERROR_DIGITS + 1
        step = Decimal(1).scaleb(exponent)
        shown = (root / step).to_integral_value(rounding="ROUND_CEILING") * step
        while Fraction(shown) ** 2 < variance:  # the square root was rounded: step up
            shown += step
        return float(shown)


def is_published_standard_error(value: float) -> bool:
    """Whether ``value`` is a standard error as documents show one: 0, or two digits."""
    if type(value) is not float or not math.isfinite(value) or value < 0:
        return False
    return len(Decimal(repr(value)).normalize().as_tuple().digits) <= STANDARD_ERROR_DIGITS


def delong_interval(
    n1: int, n0: int, ranked_twice: int, standard_error: float | None, z: float
) -> tuple[float, float] | None:
    """The AUROC's interval on the logit scale, from DeLong's (published) standard error.

    With ``A`` the AUROC, ``s`` the standard error and ``t`` Student's quantile
    over ``min(n1, n0) - 1`` degrees of freedom at ``z``'s level (the variance
    is estimated from the fewer class's placements), ``logit(A) -/+ t s / (A (1
    - A))`` mapped back: inside (0, 1) and asymmetric near 1, where the plain
    ``A -/+ z s`` covers far too little. Where that cannot be used (``A`` at 0
    or 1, no spread, fewer than 2 rows in a class: ``standard_error`` None or
    0), Wilson's interval for the proportion ``A`` on ``min(n1, n0)`` trials,
    the fewer class's rows (with ``t``, or ``z`` for one row). Logarithms and
    exponentials in 40-digit decimals, rounded once. None when the AUROC is
    undefined.
    """
    if n1 * n0 == 0:
        return None
    auroc = Fraction(ranked_twice, 2 * n1 * n0)
    fewer = min(n1, n0)
    quantile = z if fewer < 2 else t_for(z, fewer - 1)
    if not standard_error or auroc in (0, 1):
        return wilson_rate_interval(float(auroc), fewer, quantile)
    with localcontext() as context:
        context.prec = 40
        a = Decimal(auroc.numerator) / Decimal(auroc.denominator)
        centre = (a / (1 - a)).ln()
        half = Decimal(quantile) * Decimal(standard_error) / (a * (1 - a))
        low, high = ((centre + sign * half).exp() for sign in (-1, 1))
        return (float(low / (1 + low)), float(high / (1 + high)))


def hanley_mcneil_interval(sums: UncertaintySums, z: float) -> tuple[float, float] | None:
    """Hanley and McNeil's (1982) interval: ``A -/+ z SE``, clamped to [0, 1].

    With ``A`` the AUROC, ``n1`` agreed and ``n0`` disagreed rows,
    ``Q1 = A / (2 - A)`` and ``Q2 = 2 A**2 / (1 + A)``::

        SE**2 = (A (1 - A) + (n1 - 1) (Q1 - A**2) + (n0 - 1) (Q2 - A**2)) / (n1 n0)

    computed exactly from the exact ``A`` and rounded once. None when the AUROC is undefined.
    """
    return hanley_mcneil(sums.agreed, sums.disagreed, sums.ranked_twice, z)


def hanley_mcneil(n1: int, n0: int, ranked_twice: int, z: float) -> tuple[float, float] | None:
    """:func:`hanley_mcneil_interval` from the two class sizes and twice the Mann-Whitney count.

    The audit of a shared report recomputes a published interval with it.
    """
    if n1 * n0 == 0:
        return None
    a = Fraction(ranked_twice, 2 * n1 * n0)
    q1 = a / (2 - a)
    q2 = 2 * a * a / (1 + a)
    variance = (a * (1 - a) + (n1 - 1) * (q1 - a * a) + (n0 - 1) * (q2 - a * a)) / (n1 * n0)
    point = float(a)
    half = z * math.sqrt(float(max(variance, Fraction(0))))
    return (max(0.0, point - half), min(1.0, point + half))


def brier_score(sums: UncertaintySums) -> float | None:
    """Mean ``(1 - uncertainty - agreed)**2`` (sklearn's ``brier_score_loss``); None if no rows."""
    n = sums.rows
    return None if n == 0 else float(sums.brier_sum / n)
