"""Pure statistics on paired counts: two systems judged on the same trials.

When a baseline and a candidate answer the same gold rows, each row falls in
one cell of a 2 x 2 table::

                          second succeeds   second fails
        first succeeds         a (both)        b (first only)
        first fails            c (second only) d (neither)

Only the discordant cells ``b`` and ``c`` carry information about which system
is better. This module gives McNemar's exact and mid-p tests on them, and
Newcombe's hybrid score interval for the difference of the two success rates.
Integers in, floats out; value-free by construction (a test checks the import
graph).

References:
    M. W. Fagerland, S. Lydersen, P. Laake (2013), "The McNemar test for binary
    matched-pairs data: mid-p and asymptotic are better than exact
    conditional", BMC Medical Research Methodology 13:91.
    R. G. Newcombe (1998), "Improved confidence intervals for the difference
    between binomial proportions based on paired data", Statistics in
    Medicine 17(22):2635-2650, method 10.
"""

from __future__ import annotations

import math
from typing import Final, NamedTuple

from chartscore.stats.binomial import Z95, wilson_interval

# Below this much work (min(b, c) * (b + c)), the binomial sums are summed exactly
# in integers; above it they are bounded in fixed point (see _bounded_sums).
_EXACT_WORK: Final = 1 << 24


def mcnemar(baseline_only: int, candidate_only: int) -> tuple[float, float]:
    """McNemar's exact conditional test and its mid-p version, two-sided.

    With ``b`` and ``c`` the discordant counts, ``n = b + c``, ``m = min(b, c)``
    and ``X ~ Binomial(n, 1/2)`` (the number of discordant pairs that favour
    one system, under the hypothesis that neither is better)::

        exact_p = min(1, 2 P(X <= m))
        mid_p   = exact_p - P(X = m)          when b != c
        mid_p   = 1 - P(X = b) / 2            when b == c

    The mid-p value is ``P(more extreme) + P(as extreme) / 2``: when ``b == c``
    the observed split is the single central outcome, so only one point
    probability is halved. With no discordant pairs (``b = c = 0``; e.g. two
    identical systems) the conditional distribution is a point mass and this
    gives ``exact_p = 1`` and ``mid_p = 1/2``: the mid-p value is the mean of a
    randomized p-value, here uniform on [0, 1]. It is never evidence of a
    difference. chartscore follows the published formula there rather than
    special-casing it (see docs/metrics.md, "Paired comparison").

    The probabilities are sums of binomial coefficients over ``2**n``; each
    p-value is the correctly rounded float of its exact rational value. Small
    tables are summed exactly in integers; for large ones the sums are bounded
    above and below in fixed-point integer arithmetic, and the exact integer
    sums are computed only if the two bounds would round to different floats.

    Args:
        baseline_only: b, the pairs where only the baseline (first) succeeds.
        candidate_only: c, the pairs where only the candidate (second) succeeds.

    Returns:
        ``(exact_p, mid_p)``, both in [0, 1] with ``mid_p <= exact_p``.

    Raises:
        ValueError: unless both counts are non-negative ints (not bools).

    References:
        Q. McNemar (1947), Psychometrika 12(2):153-157; Fagerland, Lydersen &
        Laake (2013), BMC Medical Research Methodology 13:91.
    """
    for count in (baseline_only, candidate_only):
        if type(count) is not int or count < 0:
            raise ValueError("discordant counts must be non-negative ints")
    n = baseline_only + candidate_only
    m = min(baseline_only, candidate_only)
    tie = baseline_only == candidate_only
    result = None
    if m * n > _EXACT_WORK:
        result = _p_values(_bounded_sums(n, m), tie)
    if result is None:  # small, or (rarely) bounds that straddle a rounding boundary
        result = _p_values(_exact_sums(n, m), tie)
    assert result is not None  # exact sums always round
    return result


class _Sums(NamedTuple):
    """Bounds on the binomial tail and point probabilities, in units of ``2**exponent``.

    ``S = sum_{k <= m} C(n, k) / 2**n`` lies in ``[tail_low, tail_high] * 2**exponent``
    and ``T = C(n, m) / 2**n`` in ``[point_low, point_high] * 2**exponent``. The exact
    route has equal low and high bounds.
    """

    exponent: int
    tail_low: int
    tail_high: int
    point_low: int
    point_high: int


def _exact_sums(n: int, m: int) -> _Sums:
    term = 1
    total = 1
    for k in range(m):
        term = term * (n - k) // (k + 1)  # C(n, k + 1), exactly
        total += term
    return _Sums(-n, total, total, term, term)


def _bounded_sums(n: int, m: int) -> _Sums:
    """Bound the binomial sums in fixed point with ``width`` significant bits.

    The terms ``t_k = C(n, k) / 2**n`` grow with k up to ``m <= n/2``, so each
    step ``t_{k+1} = t_k (n - k) / (k + 1)`` multiplies by at least 1 and the
    scaled mantissa never falls below ``2**width``. Every floor (in the step and
    when the frame is coarsened by a right shift) loses less than one unit, so
    less than ``2**-width`` relatively; after at most ``2m`` such losses each
    term is low by a factor of at most ``1 + 4m 2**-width``, and the running sum
    loses less than one unit of the final frame per shift on top of that.
    """
    width = 2 * n.bit_length() + 96
    mantissa = 1 << width
    exponent = -n - width
    total = mantissa
    shifts = 0
    for k in range(m):
        mantissa = mantissa * (n - k) // (k + 1)
        excess = mantissa.bit_length() - (width + 64)
        if excess > 0:
            mantissa >>= excess
            total >>= excess
            exponent += excess
            shifts += 1
        total += mantissa
    slack = 4 * (m + 1)
    total_high = total + shifts
    total_high += -(-total_high * slack >> width) + 1
    mantissa_high = mantissa + (-(-mantissa * slack >> width)) + 1
    return _Sums(exponent, total, total_high, mantissa, mantissa_high)


def _p_values(sums: _Sums, tie: bool) -> tuple[float, float] | None:
    """Round both p-values; None if a pair of bounds straddles a rounding boundary."""
    e, s_low, s_high, t_low, t_high = sums
    if tie:
        # exact_p = 1; mid_p = 1 - T / 2 = (2**(1 - e) - T) * 2**(e - 1) in units.
        whole = 1 << (1 - e)
        mid = _rounded(whole - t_high, whole - t_low, e - 1)
        return None if mid is None else (1.0, mid)
    # exact_p = 2 S (never above 1 when b != c); mid_p = 2 S - T.
    exact = _rounded(2 * s_low, 2 * s_high, e)
    mid = _rounded(2 * s_low - t_high, 2 * s_high - t_low, e)
    if exact is None or mid is None:
        return None
    return (exact, mid)


def _rounded(low: int, high: int, exponent: int) -> float | None:
    """The float nearest ``low * 2**exponent`` if ``high * 2**exponent`` rounds the same."""
    first = _to_float(low, exponent)
    return first if low == high or _to_float(high, exponent) == first else None


def _to_float(numerator: int, exponent: int) -> float:
    # int / int is correctly rounded in CPython (subnormal results included).
    if exponent >= 0:
        return float(numerator << exponent)
    return numerator / (1 << -exponent)


def newcombe_difference(
    both: int, first_only: int, second_only: int, neither: int, z: float = Z95
) -> tuple[float, tuple[float, float]] | None:
    """The paired difference of two success rates, with Newcombe's hybrid score interval.

    With ``a = both``, ``b = first_only``, ``c = second_only``, ``d = neither``,
    ``n = a + b + c + d``, the two rates ``p1 = (a + b)/n`` and
    ``p2 = (a + c)/n`` and their Wilson intervals ``[l1, u1]``, ``[l2, u2]``::

        theta   = p1 - p2 = (b - c) / n
        delta   = sqrt((p1 - l1)**2 - 2 phi (p1 - l1)(u2 - p2) + (u2 - p2)**2)
        epsilon = sqrt((u1 - p1)**2 - 2 phi (u1 - p1)(p2 - l2) + (p2 - l2)**2)
        interval = [theta - delta, theta + epsilon]

    where ``phi`` is the correlation of the two success indicators with
    Newcombe's correction::

        phi = max(ad - bc - n/2, 0) / sqrt((a+b)(c+d)(a+c)(b+d))   if ad > bc
        phi = (ad - bc) / sqrt((a+b)(c+d)(a+c)(b+d))               otherwise
        phi = 0                                     if any margin is 0

    (A zero margin means one system's outcome is constant; its correlation
    with anything is undefined, and 0 is the value that does not shrink the
    interval.) The bounds lie in [-1, 1] by construction; rounding is clamped.

    Swapping the two systems negates ``theta`` and mirrors the interval, bit
    for bit: both square roots are evaluated in a form symmetric in their two
    distances.

    Args:
        both, first_only, second_only, neither: The four cells (non-negative ints).
        z: The normal quantile; the default gives a 95% interval.

    Returns:
        ``(theta, (lower, upper))``, or None when ``n = 0``.

    Raises:
        ValueError: unless all four cells are non-negative ints (not bools).

    Reference:
        R. G. Newcombe (1998), Statistics in Medicine 17(22):2635-2650, method
        10. Worked example (Cavo, from M. W. Fagerland, S. Lydersen, P. Laake
        (2014), Statistics in Medicine 33:2850-2875, and their 2017 book,
        ch. 8; a = 59, b = 6, c = 16, d = 80): theta = -0.0621, interval
        (-0.1186, -0.0046).
    """
    cells = (both, first_only, second_only, neither)
    if any(type(cell) is not int or cell < 0 for cell in cells):
        raise ValueError("paired cells must be non-negative ints")
    a, b, c, d = cells
    n = a + b + c + d
    if n == 0:
        return None
    first = wilson_interval(a + b, n, z)
    second = wilson_interval(a + c, n, z)
    assert first is not None and second is not None  # n > 0
    p1 = (a + b) / n
    p2 = (a + c) / n
    theta = (b - c) / n
    phi = _corrected_phi(a, b, c, d)
    delta = _combined(p1 - first[0], second[1] - p2, phi)
    epsilon = _combined(first[1] - p1, p2 - second[0], phi)
    return theta, (max(-1.0, theta - delta), min(1.0, theta + epsilon))


def _corrected_phi(a: int, b: int, c: int, d: int) -> float:
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    if margins == 0:
        return 0.0
    n = a + b + c + d
    twice = 2 * (a * d - b * c)  # twice the numerator, to keep n/2 an integer
    if twice > 0:
        twice = max(twice - n, 0)
    return twice / (2 * math.sqrt(margins))


def _combined(x: float, y: float, phi: float) -> float:
    # sqrt(x^2 - 2 phi x y + y^2), written symmetrically in x and y so that
    # swapping the systems gives the same bits; a tiny negative from rounding
    # (phi near 1, x near y) is clamped to 0.
    return math.sqrt(max(0.0, (x * x + y * y) - 2.0 * phi * (x * y)))
