"""Pure statistics on counts: integers in, floats out, nothing else.

Value-free by construction: this module must not import the modules that hold
values (a test checks the import graph).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from statistics import NormalDist
from typing import Final

Z95: Final = NormalDist().inv_cdf(0.975)
"""The 0.975 standard-normal quantile for two-sided 95% intervals.

``statistics.NormalDist().inv_cdf(0.975)``, the binary64 value
1.9599639845400536 (scipy's ``norm.ppf(0.975)`` is 2 ulp higher,
1.959963984540054); docs/metrics.md prints this value.
"""


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float] | None:
    """Two-sided Wilson score interval for a binomial proportion.

    For ``k`` successes in ``n`` trials the bounds are the two roots ``p`` of
    ``(k/n - p)**2 = z**2 p (1 - p) / n``. They are computed in a form free of
    cancellation (the textbook ``center - margin`` loses up to 35 ulp near
    ``k = 1``)::

        s = k + z**2/2 + z * sqrt(k (n - k) / n + z**2/4)
        lower = k**2 / (n s)          upper = s / (n + z**2)

    ``lower`` is the conjugate of ``(k + z**2/2 - z sqrt(...)) / (n + z**2)``.
    Both are within a few ulp of the exact bounds (a test checks them against a
    60-digit reference). The lower bound is exactly 0 when ``k == 0`` and the
    upper exactly 1 when ``k == n``, as the algebra says.

    Args:
        successes: k, with 0 <= k <= n.
        trials: n >= 0.
        z: The normal quantile; the default gives a 95% interval.

    Returns:
        ``(lower, upper)``, or None when there are no trials.

    Raises:
        ValueError: if the counts are not integers with 0 <= k <= n.

    Reference:
        E. B. Wilson (1927), "Probable inference, the law of succession, and
        statistical inference", JASA 22(158):209-212.
    """
    if not (type(successes) is int and type(trials) is int and 0 <= successes <= trials):
        raise ValueError("need integers 0 <= successes <= trials")
    if trials == 0:
        return None
    k, n = successes, trials
    z2 = z * z
    # Evaluated exactly as docs/metrics.md writes it, so a reimplementation
    # from the docs gets the same bits: k (n - k) / n is one rounded division
    # of integers; the rest is binary64, left to right.
    s = k + z2 / 2 + z * math.sqrt(k * (n - k) / n + z2 / 4)
    lower = k * k / (n * s)
    upper = 1.0 if k == n else min(1.0, s / (n + z2))
    return (lower, upper)


def wilson_rate_interval(rate: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson's interval for an estimated proportion ``rate`` on ``n`` effective trials.

    The textbook centre and margin with a rate that need not be ``k / n`` (a
    weighted estimate, an AUROC), clamped to [0, 1]::

        centre = (p + z**2 / 2n) / (1 + z**2 / n)
        half   = z sqrt(p (1 - p) / n + z**2 / 4n**2) / (1 + z**2 / n)

    Binary64 arithmetic only (no library function), so every platform gives
    the same bits. ``n`` must be positive.
    """
    p = rate
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


CountRange = tuple[int, int | None]
"""``(lo, hi)``: every integer from lo to hi; hi None for no upper end."""


def widest_wilson(
    successes: CountRange, trials: CountRange, z: float = Z95
) -> tuple[float, float] | None:
    """The widest Wilson interval over every count pair the two ranges allow.

    The union of the Wilson intervals of every ``(k, n)`` with ``k`` and ``n``
    in their ranges, ``k <= n`` and ``n >= 1``: a bound on the rate that holds
    whichever of those counts is the true one (docs/disclosure.md, "Provable
    bounds"). The Wilson lower bound grows with ``k`` and falls with ``n``, and
    so does the upper bound (both follow from the score equation: at the lower
    root its derivative in ``n`` is negative everywhere; at the upper root
    wherever the bound exceeds ``z**2 / (4 n + z**2)``, which it always does,
    being at least ``z**2 / (n + z**2)``). So the extremes are at two corners::

        lower = wilson(k_lo, n_hi).lower      (0 when n_hi is unbounded)
        upper = 1 if k_hi >= n_1 else wilson(k_hi, n_1).upper,  n_1 = max(1, n_lo)

    Args:
        successes: ``(lo, hi)`` of the success count (hi None: unbounded).
        trials: ``(lo, hi)`` of the trial count.
        z: The normal quantile of the interval.

    Returns:
        ``(lower, upper)``, or None when no pair has a trial (``n_hi == 0``).

    Raises:
        ValueError: if a range is not integers with ``0 <= lo <= hi``, or no
            pair has ``k <= n``.
    """
    return _outer_bounds(successes, trials, lambda k, n: _wilson(k, n, z))


def rate_range(successes: CountRange, trials: CountRange) -> tuple[float, float] | None:
    """The range of the rate ``k / n`` over every pair the ranges allow (``k <= n``, ``n >= 1``).

    Not an interval estimate: the smallest and largest observed rate the
    counts could give, ``k_lo / n_hi`` (0 when unbounded) and
    ``min(1, k_hi / max(1, n_lo))``. None when no pair has a trial.

    Raises:
        ValueError: as :func:`widest_wilson`.
    """
    return _outer_bounds(successes, trials, lambda k, n: (k / n, k / n))


def innermost_wilson(
    successes: CountRange, trials: CountRange, z: float = Z95
) -> tuple[float, float] | None:
    """The largest Wilson lower bound and the smallest upper bound over every pair allowed.

    What a gate that reads an interval's *inner* side (``max_lower``,
    ``min_upper``) may read when the counts are known only by ranges: a figure
    that holds whichever ``(k, n)`` is the true one (``k`` and ``n`` in their
    ranges, ``k <= n``, ``n >= 1``). As in :func:`widest_wilson`, both bounds
    grow with ``k`` and fall with ``n``, so::

        upper = wilson(k_lo, n_hi).upper       (0 when n_hi is unbounded)
        lower = wilson(k*, max(n_lo, k*, 1)).lower,  k* = min(k_hi, n_hi)
                                               (1 when both are unbounded)

    (for ``k`` above ``n_lo`` the smallest ``n`` is ``k`` itself, and
    ``wilson(k, k).lower = k / (k + z**2)`` still grows with ``k``). The two
    are not an interval: the lower may exceed the upper; a gate reads one.

    Returns:
        ``(largest lower, smallest upper)``, or None when no pair has a trial.

    Raises:
        ValueError: as :func:`widest_wilson`.
    """
    corners = inner_corners(successes, trials)
    if corners is None:
        return None
    lower_at, upper_at = corners
    lower = 1.0 if lower_at is None else _wilson(*lower_at, z)[0]
    upper = 0.0 if upper_at is None else _wilson(*upper_at, z)[1]
    return (lower, upper)


def inner_corners(
    successes: CountRange, trials: CountRange
) -> tuple[tuple[int, int] | None, tuple[int, int] | None] | None:
    """The pairs where a monotone interval's lower bound is largest and its upper smallest.

    For any interval whose bounds grow with ``k`` and fall with ``n`` (Wilson,
    Clopper-Pearson): ``(k*, max(n_lo, k*, 1))`` with ``k* = min(k_hi, n_hi)``
    (None when both are unbounded: the bound tends to 1) and ``(k_lo, n_hi)``
    (None when ``n_hi`` is unbounded: the bound tends to 0). None when no pair
    has a trial (``n_hi == 0``).

    Raises:
        ValueError: as :func:`widest_wilson`.
    """
    counts = _allowed_counts(successes, trials)
    if counts is None:
        return None
    (k_lo, k_hi), (n_lo, n_hi) = counts
    tops = [top for top in (k_hi, n_hi) if top is not None]
    lower_at = None
    if tops:
        k_star = min(tops)
        lower_at = (k_star, max(n_lo, k_star, 1))
    upper_at = None if n_hi is None else (k_lo, n_hi)
    return lower_at, upper_at


def _outer_bounds(
    successes: CountRange,
    trials: CountRange,
    bounds: Callable[[int, int], tuple[float, float]],
) -> tuple[float, float] | None:
    """The lowest lower and highest upper of ``bounds(k, n)`` over every pair allowed.

    For bounds that grow with ``k`` and fall with ``n`` (the Wilson interval, the rate
    itself): the two corners :func:`widest_wilson` derives.
    """
    counts = _allowed_counts(successes, trials)
    if counts is None:
        return None
    (k_lo, k_hi), (n_lo, n_hi) = counts
    lowest = 0.0 if n_hi is None else bounds(k_lo, n_hi)[0]
    n_1 = max(1, n_lo)
    highest = 1.0 if k_hi is None or k_hi >= n_1 else bounds(k_hi, n_1)[1]
    return (lowest, highest)


def _allowed_counts(
    successes: CountRange, trials: CountRange
) -> tuple[CountRange, CountRange] | None:
    """Both ranges, checked; None when no pair has a trial (``n_hi == 0``).

    Raises:
        ValueError: as :func:`widest_wilson`.
    """
    (k_lo, k_hi), (n_lo, n_hi) = _range(successes), _range(trials)
    if n_hi == 0:
        return None
    if n_hi is not None and k_lo > n_hi:
        raise ValueError("no pair of counts has successes <= trials")
    return (k_lo, k_hi), (n_lo, n_hi)


def _range(value: CountRange) -> CountRange:
    low, high = value
    if type(low) is not int or low < 0 or not (high is None or (type(high) is int and high >= low)):
        raise ValueError("need integers 0 <= lo <= hi")
    return low, high


def _wilson(k: int, n: int, z: float) -> tuple[float, float]:
    interval = wilson_interval(k, n, z)
    assert interval is not None
    return interval


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

    where ``wr_i = sum_j w_ij c_j`` and ``wc_j = sum_i w_ij r_i``. The
    interval is ``kappa -/+ z sqrt(var)``, clamped to [-1, 1].

    Everything up to the final square root is exact integer arithmetic, so
    kappa and the variance are correctly rounded. The variance is never
    negative, so nothing is clamped: the term subtracted is the square of the
    mean of ``x_ij = w_ij - (wr_i + wc_j)(1 - kappa)`` under ``p``
    (``sum p_ij x_ij = p_o - 2 p_e (1 - kappa) = kappa - p_e (1 - kappa)``),
    so the numerator is the variance of ``x``. It is exactly 0 when ``x`` is
    constant on the occupied cells, for example with perfect agreement or
    when one rater uses a single category: the interval is then ``[kappa,
    kappa]`` whatever ``n`` is (see docs/metrics.md for when that means
    nothing).

    The weighted sums ``wr_i`` and ``wc_j`` are closed forms in the moments
    of the marginals (quadratic weights make them quadratic in ``i``), so
    the cost is linear in the number of occupied cells and levels used,
    never in ``size``.

    Args:
        cells: Nonzero cells as (gold category, answer category, count).
        size: The number of categories (the full scale for ordinal fields); 0
            when there are none (then there are no pairs either).
        weighting: "none" or "quadratic".
        z: The normal quantile of the interval.

    Returns:
        ``(kappa, (lower, upper), pairs)``, or None when kappa is undefined:
        no pairs, or expected agreement of 1.

    Raises:
        ValueError: for an unknown weighting, a size that is not a
            non-negative int, or cells outside the table or not integers.

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
    rows: dict[int, int] = {}  # gold marginal counts R_i, over the levels used
    cols: dict[int, int] = {}  # answer marginal counts C_j
    for i, j, count in table:
        rows[i] = rows.get(i, 0) + count
        cols[j] = cols.get(j, 0) + count
    quadratic = weighting == "quadratic"
    # In integers: d_ij = S (1 - w_ij) is the disagreement distance, with scale
    # S = (size - 1)^2 and d_ij = (i - j)^2 (quadratic) or S = 1 and d_ij = [i != j].
    # A_i = sum_j d_ij C_j and B_j = sum_i d_ij R_i, so wr_i = 1 - A_i / (S n).
    scale = max((size - 1) ** 2, 1) if quadratic else 1
    if quadratic:
        # sum_j (i - j)^2 C_j = n i^2 - 2 i M1 + M2, with the moments M of C (and of R).
        col_m1 = sum(j * count for j, count in cols.items())
        col_m2 = sum(j * j * count for j, count in cols.items())
        row_m1 = sum(i * count for i, count in rows.items())
        row_m2 = sum(i * i * count for i, count in rows.items())
        row_distance = {i: n * i * i - 2 * i * col_m1 + col_m2 for i in rows}
        col_distance = {j: n * j * j - 2 * j * row_m1 + row_m2 for j in cols}
        observed = sum((i - j) ** 2 * count for i, j, count in table)
    else:
        row_distance = {i: n - cols.get(i, 0) for i in rows}
        col_distance = {j: n - rows.get(j, 0) for j in cols}
        observed = sum(count for i, j, count in table if i != j)
    # D_e = sum_ij d_ij R_i C_j = S n^2 (1 - p_e); D_o = sum_ij d_ij n_ij = S n (1 - p_o).
    expected = sum(rows[i] * row_distance[i] for i in rows)
    if expected == 0:  # expected agreement p_e is exactly 1
        return None
    # kappa = 1 - n D_o / D_e, and x_ij = y_ij / (S D_e) with the integer
    # y_ij = D_e (S - d_ij) - D_o (2 S n - A_i - B_j). Then
    # var = n (n sum n_ij y_ij^2 - (sum n_ij y_ij)^2) / D_e^4, all in integers.
    total = 0
    squares = 0
    for i, j, count in table:
        distance = (i - j) ** 2 if quadratic else int(i != j)
        y = expected * (scale - distance) - observed * (
            2 * scale * n - row_distance[i] - col_distance[j]
        )
        total += count * y
        squares += count * y * y
    value = (expected - n * observed) / expected  # int / int: correctly rounded
    variance = n * (n * squares - total * total) / expected**4
    half_width = z * math.sqrt(variance)
    interval = (max(-1.0, value - half_width), min(1.0, value + half_width))
    return value, interval, n
