"""Declared uncertainty as a predictor of agreement: AUROC, Brier score, risk and coverage.

An evidence chain declares an ``uncertainty`` in [0, 1]. Over a field's answered
answerable rows that carry one, the target is normalized agreement (1 when the
answer agrees with gold) and the forecast is ``1 - uncertainty``. Everything
here is a function of exact sufficient statistics that add across partitions
(:class:`UncertaintySums`), so a document can be checked from its numbers
(docs/metrics.md, "Declared uncertainty").

Value-free: counts, an exact sum and figures; imports only ``stats``.

References:
    J. A. Hanley, B. J. McNeil (1982), "The meaning and use of the area under a
    receiver operating characteristic (ROC) curve", Radiology 143(1):29-36;
    G. W. Brier (1950), "Verification of forecasts expressed in terms of
    probability", Monthly Weather Review 78(1):1-3; R. El-Yaniv, Y. Wiener
    (2010), "On the foundations of noise-free selective classification",
    JMLR 11:1605-1641 (risk and coverage).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction
from typing import Final

import attrs

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
    """

    agreed: int
    disagreed: int
    ranked_twice: int
    brier_sum: Fraction
    kept: tuple[tuple[int, int], ...]
    without: int

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
        return cls(positives, negatives, ranked, Fraction(brier, scale * scale), kept, without)


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
