"""Pure statistics on counts: integers in, floats out, nothing else.

Value-free by construction: this module must not import the modules that hold
values (a test checks the import graph).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction
from statistics import NormalDist
from typing import Final

Z95: Final = NormalDist().inv_cdf(0.975)
"""The 0.975 standard-normal quantile, about 1.959964, for two-sided 95% intervals."""


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float] | None:
    """Two-sided Wilson score interval for a binomial proportion.

    For ``k`` successes in ``n`` trials, with ``p = k/n``::

        center = (p + z**2 / (2n)) / (1 + z**2 / n)
        margin = z * sqrt(p (1 - p) / n + z**2 / (4 n**2)) / (1 + z**2 / n)

    The bounds are ``center -/+ margin`` clamped to [0, 1]; the lower bound is
    exactly 0 when ``k == 0`` and the upper exactly 1 when ``k == n``, as the
    algebra says (floating point could otherwise leave 1e-17 there).

    Args:
        successes: k, with 0 <= k <= n.
        trials: n >= 0.
        z: The normal quantile; the default gives a 95% interval.

    Returns:
        ``(lower, upper)``, or None when there are no trials.

    Reference:
        E. B. Wilson (1927), "Probable inference, the law of succession, and
        statistical inference", JASA 22(158):209-212.
    """
    if not (type(successes) is int and type(trials) is int and 0 <= successes <= trials):
        raise ValueError("need integers 0 <= successes <= trials")
    if trials == 0:
        return None
    n = trials
    p = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    center = (p + z2 / (2 * n)) / denominator
    margin = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n**2)) / denominator
    lower = 0.0 if successes == 0 else max(0.0, center - margin)
    upper = 1.0 if successes == trials else min(1.0, center + margin)
    return (lower, upper)


Cell = tuple[int, int, int]
"""(row, column, count) of a sparse square table."""


def cohen_kappa(
    cells: Iterable[Cell], size: int, weighting: str, z: float = Z95
) -> tuple[float, tuple[float, float], int] | None:
    """Cohen's kappa with the Fleiss-Cohen-Everitt large-sample interval.

    With agreement weights ``w`` (1 on the diagonal; unweighted: 0 elsewhere;
    quadratic: ``1 - (i - j)**2 / (size - 1)**2``), cell proportions ``p_ij``
    and marginals ``r_i`` (rows, gold) and ``c_j`` (columns, answers)::

        p_o = sum w_ij p_ij        p_e = sum w_ij r_i c_j
        kappa = (p_o - p_e) / (1 - p_e)
        var = (sum p_ij (w_ij - (wr_i + wc_j)(1 - kappa))**2
               - (kappa - p_e (1 - kappa))**2) / (n (1 - p_e)**2)

    where ``wr_i = sum_j w_ij c_j`` and ``wc_j = sum_i w_ij r_i``. A tiny
    negative variance from rounding is clamped to 0, and the interval
    ``kappa -/+ z sqrt(var)`` to [-1, 1].

    Args:
        cells: Nonzero cells as (gold category, answer category, count).
        size: The number of categories (the full scale for ordinal fields); 0
            when there are none (then there are no pairs either).
        weighting: "none" or "quadratic".
        z: The normal quantile of the interval.

    Returns:
        ``(kappa, (lower, upper), pairs)``, or None when kappa is undefined:
        no pairs, or expected agreement of 1.

    References:
        J. Cohen (1968), Psychological Bulletin 70(4):213-220;
        J. L. Fleiss, J. Cohen, B. S. Everitt (1969), Psychological Bulletin
        72(5):323-327.
    """
    if weighting not in ("none", "quadratic"):
        raise ValueError("weighting must be 'none' or 'quadratic'")
    if type(size) is not int or size < 0:
        raise ValueError("size must be a non-negative int")
    table = list(cells)
    for i, j, count in table:
        if not (type(i) is int and type(j) is int and type(count) is int):
            raise ValueError("cells must be (int, int, int)")
        if not (0 <= i < size and 0 <= j < size and count >= 0):
            raise ValueError("cells must lie inside the table with non-negative counts")
    table = [cell for cell in table if cell[2]]
    n = sum(count for _, _, count in table)
    if n == 0:
        return None
    rows = [0] * size
    cols = [0] * size
    for i, j, count in table:
        rows[i] += count
        cols[j] += count
    # Disagreement distances in integers: unweighted 1 off the diagonal; quadratic (i - j)^2.
    quadratic = weighting == "quadratic"
    scale = max((size - 1) ** 2, 1) if quadratic else 1

    def distance(i: int, j: int) -> int:
        return (i - j) ** 2 if quadratic else int(i != j)

    used_rows = [i for i in range(size) if rows[i]]
    used_cols = [j for j in range(size) if cols[j]]
    # Everything below is exact rational arithmetic (w_ij = 1 - distance / scale),
    # so kappa is correctly rounded and the variance, a true variance, is never
    # negative; only the final square root is a float operation.
    observed_disagreement = sum(distance(i, j) * count for i, j, count in table)
    if weighting == "none":
        expected_disagreement = n * n - sum(rows[i] * cols[i] for i in range(size))
    else:
        expected_disagreement = sum(
            distance(i, j) * rows[i] * cols[j] for i in used_rows for j in used_cols
        )
    if expected_disagreement == 0:  # expected agreement p_e is exactly 1
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
    value = float(kappa)
    half_width = z * math.sqrt(max(float(variance), 0.0))
    interval = (max(-1.0, value - half_width), min(1.0, value + half_width))
    return value, interval, n
