"""The Clopper-Pearson ("exact") interval, for gates that must hold their nominal level.

Wilson's interval is the report's: it covers close to its level on average, but
at a given rate and sample size its one-sided error can exceed the nominal one
(at 0.90, a ``min_lower`` gate on a field slice can pass falsely up to about 7%
of the time against 5%; docs/compare.md). Clopper and Pearson's interval
inverts the binomial test itself, so a gate that reads it never passes falsely
more often than its level says, at any rate and any sample size: the choice of a
committee that wants that guarantee (``--gate-interval exact``).

For ``k`` successes in ``n`` trials at two-sided level ``1 - alpha``::

    lower: P(X >= k | p) = alpha / 2     (0 when k = 0)
    upper: P(X <= k | p) = alpha / 2     (1 when k = n)

with ``X`` binomial ``(n, p)``. The binomial tail is the regularized
incomplete beta function, ``P(X >= k | p) = I_p(k, n - k + 1)``, evaluated by
its continued fraction (Lentz's method) in 50-digit decimal arithmetic; each
bound is found by Newton's method (the tail's slope is the beta density),
bracketed to 64 bits and rounded outward, so every platform gives the same
bits. Value-free: integers in, floats out.

Reference: C. J. Clopper, E. S. Pearson (1934), "The use of confidence or
fiducial limits illustrated in the case of the binomial", Biometrika
26(4):404-413.
"""

from __future__ import annotations

import functools
import math
from decimal import Decimal, localcontext
from typing import Final

from chartscore.stats.binomial import inner_corners
from chartscore.stats.student_t import PI, level_of

PRECISION: Final = 50
_TINY: Final = Decimal(10) ** -200
_EPSILON: Final = Decimal(10) ** -45
_RESOLUTION: Final = Decimal(2) ** -64


def _log_factorial(n: int) -> Decimal:
    # Exact below 200; above, Stirling's series with five correction terms (error below
    # 1e-25 relative at n = 200, far below the 50 digits carried).
    if n < 200:
        return Decimal(math.factorial(n)).ln()
    x = Decimal(n)
    series = (
        1 / (12 * x) - 1 / (360 * x**3) + 1 / (1260 * x**5) - 1 / (1680 * x**7) + 1 / (1188 * x**9)
    )
    return x * x.ln() - x + (2 * PI * x).ln() / 2 + series


def _continued_fraction(a: int, b: int, x: Decimal) -> Decimal:
    # The continued fraction of I_x(a, b) (Numerical Recipes' betacf), by Lentz's method.
    c, d = Decimal(1), 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 100_000):
        m2 = 2 * m
        for coefficient in (
            m * (b - m) * x / ((a + m2 - 1) * (a + m2)),
            -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1)),
        ):
            d = 1 + coefficient * d
            d = 1 / (d if abs(d) > _TINY else _TINY)
            c = 1 + coefficient / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1) < _EPSILON:
            break
    return h


def _log_front(k: int, n: int) -> Decimal:
    # log(n! / ((k - 1)! (n - k)!)) = log(1 / B(k, n - k + 1)).
    return _log_factorial(n) - _log_factorial(k - 1) - _log_factorial(n - k)


def upper_tail(k: int, n: int, p: Decimal) -> Decimal:
    """``P(X >= k)`` for ``X`` binomial ``(n, p)``, ``1 <= k <= n``, ``0 < p < 1``.

    ``I_p(k, n - k + 1)``, whose prefactor ``p**a (1 - p)**b / B(a, b)`` (``1 / B(k, n -
    k + 1) = n! / ((k - 1)! (n - k)!)``) is taken in logarithms; the continued
    fraction of whichever side converges.
    """
    a, b = k, n - k + 1
    with localcontext() as context:
        context.prec = PRECISION
        front = (_log_front(k, n) + a * p.ln() + b * (1 - p).ln()).exp()
        if p < Decimal(a + 1) / (a + b + 2):
            return front * _continued_fraction(a, b, p) / a
        # I_p(a, b) = 1 - I_{1-p}(b, a); the prefactor is symmetric up to the 1/a vs 1/b.
        return 1 - front * _continued_fraction(b, a, 1 - p) / b


def _density(k: int, n: int, p: Decimal) -> Decimal:
    # d/dp P(X >= k | p): the beta(k, n - k + 1) density.
    with localcontext() as context:
        context.prec = PRECISION
        return (_log_front(k, n) + (k - 1) * p.ln() + (n - k) * (1 - p).ln()).exp()


@functools.cache
def clopper_pearson(successes: int, trials: int, z: float) -> tuple[float, float] | None:
    """Clopper and Pearson's interval at the level of the normal quantile ``z``.

    Args:
        successes: ``k``, with ``0 <= k <= n``.
        trials: ``n``.
        z: One of the three levels' normal quantiles (0.90, 0.95, 0.99).

    Returns:
        ``(lower, upper)``, each on the safe side of the exact bound (the lower
        rounded down, the upper up) and within a few units in the last place
        of it; None with no trials.

    Raises:
        ValueError: for counts that are not ints with ``0 <= k <= n``, or
            another ``z``.
    """
    if not (type(successes) is int and type(trials) is int and 0 <= successes <= trials):
        raise ValueError("need integers 0 <= successes <= trials")
    alpha_half = (1 - Decimal(repr(level_of(z)))) / 2
    if trials == 0:
        return None
    k, n = successes, trials
    lower = upper = None
    if k > 0:  # P(X >= k | p) = alpha / 2
        lower = _root(k, n, alpha_half, Decimal(2 * k - 1) / (2 * n))[0]
    if k < n:  # P(X <= k | p) = alpha / 2, i.e. P(X >= k + 1 | p) = 1 - alpha / 2
        upper = _root(k + 1, n, 1 - alpha_half, Decimal(2 * k + 1) / (2 * n))[1]
    return (
        0.0 if lower is None else _float_below(lower),
        1.0 if upper is None else _float_above(upper),
    )


def _root(k: int, n: int, target: Decimal, start: Decimal) -> tuple[Decimal, Decimal]:
    """A bracket ``low < p < high`` of the ``p`` where ``P(X >= k | p) = target``.

    Newton's method on the tail, whose slope is the beta density, kept inside
    (0, 1); then a bracket of relative width ``2**-64`` around it, checked by
    the tail's sign at both ends (bisection takes over if Newton wandered).
    """
    with localcontext() as context:
        context.prec = PRECISION
        p = start
        for _ in range(100):
            slope = _density(k, n, p)
            if slope == 0:
                break
            step = (upper_tail(k, n, p) - target) / slope
            moved = min(max(p - step, p / 16), 1 - (1 - p) / 16)
            if abs(moved - p) <= p * _RESOLUTION / 4:
                p = moved
                break
            p = moved
        delta = p * _RESOLUTION
        low, high = p - delta, p + delta
        if upper_tail(k, n, low) < target <= upper_tail(k, n, high):
            return low, high
        return _bisect(k, n, target)


def _bisect(k: int, n: int, target: Decimal) -> tuple[Decimal, Decimal]:
    # The slow, sure way: 200 halvings of (0, 1) (never needed on the tests' grid).
    low, high = Decimal(0), Decimal(1)
    for _ in range(200):
        middle = (low + high) / 2
        if upper_tail(k, n, middle) < target:
            low = middle
        else:
            high = middle
    return low, high


def _float_below(value: Decimal) -> float:
    # The nearest float not above ``value``: a lower bound never moves inward.
    found = float(value)
    return math.nextafter(found, 0.0) if Decimal(found) > value else found


def _float_above(value: Decimal) -> float:
    found = float(value)
    return math.nextafter(found, 1.0) if Decimal(found) < value else found


def widest_clopper_pearson(
    successes: tuple[int, int | None], trials: tuple[int, int | None], z: float
) -> tuple[float, float] | None:
    """The widest Clopper-Pearson interval over every count pair the two ranges allow.

    As :func:`chartscore.stats.widest_wilson`: both bounds grow with ``k`` and
    fall with ``n`` (the binomial family is stochastically increasing in
    ``p``), so the extremes are at two corners, ``(k_lo, n_hi)`` for the lower
    bound (0 when ``n_hi`` is unbounded) and ``(k_hi, max(1, n_lo))`` for the
    upper (1 when ``k_hi`` reaches it). None when no pair has a trial.

    Raises:
        ValueError: if a range is not integers with ``0 <= lo <= hi``, or no
            pair has ``k <= n``.
    """
    (k_lo, k_hi), (n_lo, n_hi) = successes, trials
    for low, high in (successes, trials):
        if (
            type(low) is not int
            or low < 0
            or not (high is None or (type(high) is int and high >= low))
        ):
            raise ValueError("need integers 0 <= lo <= hi")
    if n_hi == 0:
        return None
    if n_hi is not None and k_lo > n_hi:
        raise ValueError("no pair of counts has successes <= trials")
    lowest = 0.0
    if n_hi is not None:
        found = clopper_pearson(k_lo, n_hi, z)
        assert found is not None
        lowest = found[0]
    n_1 = max(1, n_lo)
    highest = 1.0
    if k_hi is not None and k_hi < n_1:
        found = clopper_pearson(k_hi, n_1, z)
        assert found is not None
        highest = found[1]
    return (lowest, highest)


def innermost_clopper_pearson(
    successes: tuple[int, int | None], trials: tuple[int, int | None], z: float
) -> tuple[float, float] | None:
    """The largest Clopper-Pearson lower bound and the smallest upper over every pair allowed.

    As :func:`chartscore.stats.binomial.innermost_wilson` (the same corners,
    :func:`~chartscore.stats.binomial.inner_corners`): what a ``max_lower`` or
    ``min_upper`` gate reads when the counts are known only by ranges. None when
    no pair has a trial.

    Raises:
        ValueError: if a range is not integers with ``0 <= lo <= hi``, or no
            pair has ``k <= n``.
    """
    corners = inner_corners(successes, trials)
    if corners is None:
        return None
    lower_at, upper_at = corners
    lower, upper = 1.0, 0.0
    if lower_at is not None:
        found = clopper_pearson(*lower_at, z)
        assert found is not None
        lower = found[0]
    if upper_at is not None:
        found = clopper_pearson(*upper_at, z)
        assert found is not None
        upper = found[1]
    return (lower, upper)
